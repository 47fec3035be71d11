/** Builds the organization license contracts resource. */
import type { BaseDeps } from '../deps.js';
import type { OrganizationService } from '../organizations/service.js';
import { OrgLicenseContractService } from './service.js';
import { OrgLicenseContractStore } from './store.js';

export function createOrgLicenseContracts({ store }: BaseDeps, orgs: OrganizationService): OrgLicenseContractService {
  return new OrgLicenseContractService(new OrgLicenseContractStore(store), orgs);
}
