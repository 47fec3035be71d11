/** Builds the vendor data resource (antivirus installations). */
import type { BaseDeps } from '../deps.js';
import type { EndpointService } from '../endpoints/service.js';
import { VendorDataService } from './service.js';
import { VendorDataStore } from './store.js';

export function createVendorData({ store }: BaseDeps, endpoints: EndpointService): VendorDataService {
  return new VendorDataService(new VendorDataStore(store), endpoints);
}
