/** Builds the software inventory resource. */
import type { BaseDeps } from '../deps.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import { SoftwareInventoryService } from './service.js';
import { SoftwareInventoryStore } from './store.js';

export function createSoftwareInventory(
  { store }: BaseDeps,
  deps: { endpoints: EndpointService; orgs: OrganizationService },
): SoftwareInventoryService {
  return new SoftwareInventoryService(new SoftwareInventoryStore(store), deps.endpoints, deps.orgs);
}
