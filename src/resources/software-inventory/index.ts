/** Builds the software inventory resource. */
import type { BaseDeps } from '../deps.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import { SoftwareInventoryService } from './service.js';
import { SoftwareInventoryStore } from './store.js';
import { InventoryDigests } from './digests.js';

export function createSoftwareInventory(
  { store }: BaseDeps,
  deps: { endpoints: EndpointService; orgs: OrganizationService },
): SoftwareInventoryService {
  return new SoftwareInventoryService(new SoftwareInventoryStore(store), new InventoryDigests(store), deps.endpoints, deps.orgs);
}
