/** Builds the modules resource: enabled modules per organization and endpoint. */
import type { BaseDeps } from '../deps.js';
import type { BundleService } from '../bundles/service.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import { ModuleService } from './service.js';
import { EnabledModulesStore } from './store.js';

export function createModules(
  { store }: BaseDeps,
  deps: { endpoints: EndpointService; orgs: OrganizationService; bundles: BundleService },
): ModuleService {
  return new ModuleService(new EnabledModulesStore(store), deps.endpoints, deps.orgs, deps.bundles);
}
