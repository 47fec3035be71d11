/** Builds the organization agent configuration resource. */
import type { BaseDeps } from '../deps.js';
import type { OrganizationService } from '../organizations/service.js';
import { OrgAgentConfigService } from './service.js';
import { OrgAgentConfigStore } from './store.js';

/** `onChange` runs after a configuration is written (presence re-reads its timeouts). */
export function createOrgAgentConfig({ store }: BaseDeps, orgs: OrganizationService, onChange: () => void): OrgAgentConfigService {
  return new OrgAgentConfigService(new OrgAgentConfigStore(store), orgs, onChange);
}
