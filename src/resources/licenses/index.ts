/** Builds the licenses resource. */
import type { BaseDeps } from '../deps.js';
import type { OrganizationService } from '../organizations/service.js';
import { LicenseService } from './service.js';
import { LicenseStore } from './store.js';

export function createLicenses({ store }: BaseDeps, orgs: OrganizationService): LicenseService {
  return new LicenseService(new LicenseStore(store), orgs);
}
