/** Builds the bundles resource: the catalogue file's bundles and the admin's replacements. */
import type { BaseDeps } from '../deps.js';
import { BundleService, loadCatalogueFile } from './service.js';
import { BundleStore } from './store.js';

export function createBundles({ store }: BaseDeps): BundleService {
  return new BundleService(new BundleStore(store), loadCatalogueFile());
}
