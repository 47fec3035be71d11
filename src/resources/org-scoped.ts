/**
 * The org-scoped indices, as their stores declare them: the composition root hands this to the
 * store context, so a reindex and the ancestry rewrites know where each keeps its organization.
 */
import { orgPathFields, type OrgPathFields, type OrgScopedIndex } from '../store/org-path.js';
import { AUDIT_ORG_SCOPE } from './audit/store.js';
import { ENDPOINTS_ORG_SCOPE } from './endpoints/store.js';
import { JOBS_ORG_SCOPE } from './jobs/store.js';
import { ROLLOUTS_ORG_SCOPE } from './rollouts/store.js';
import { LICENSE_CONTRACTS_ORG_SCOPE } from './license-contracts/store.js';
import { LICENSES_ORG_SCOPE } from './licenses/store.js';
import { HEARTBEATS_ORG_SCOPE } from './network/heartbeat-store.js';
import { NETWORK_HOSTS_ORG_SCOPE } from './network/host-store.js';
import { SOFTWARE_INVENTORY_ORG_SCOPE } from './software-inventory/store.js';

const DECLARED: readonly OrgScopedIndex[] = [
  ENDPOINTS_ORG_SCOPE,
  JOBS_ORG_SCOPE,
  ROLLOUTS_ORG_SCOPE,
  LICENSES_ORG_SCOPE,
  LICENSE_CONTRACTS_ORG_SCOPE,
  NETWORK_HOSTS_ORG_SCOPE,
  HEARTBEATS_ORG_SCOPE,
  SOFTWARE_INVENTORY_ORG_SCOPE,
  AUDIT_ORG_SCOPE,
];

/** Org-scoped indices by logical name. */
export const ORG_SCOPED_INDICES: Readonly<Record<string, OrgPathFields>> = Object.fromEntries(
  DECLARED.map((d) => [d.index, orgPathFields(d.orgField)]),
);
