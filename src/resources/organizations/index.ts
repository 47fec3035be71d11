/** Builds the organizations resource: the tree, its moves, and the store context that stamps the ancestry of org-scoped records. */
import type { BaseDeps } from '../deps.js';
import type { StoreContext } from '../../store/client.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { LeaseStore } from '../../store/lease.js';
import { ORG_SCOPED_INDICES } from '../org-scoped.js';
import { AncestryKeeper } from './ancestry-migration.js';
import { OrgMoveStore } from './move-store.js';
import { OrgMoveTask } from './move-task.js';
import { OrganizationService } from './service.js';
import { OrganizationStore } from './store.js';

export interface Organizations {
  service: OrganizationService;
  /** The store context every other store writes through: it stamps the ancestry of org-scoped records from this tree (docs/adr/0085). */
  store: StoreContext;
  /** Background: stamps the ancestry on records an older release wrote without it. */
  ancestry: AncestryKeeper;
}

export function createOrganizations({ config, store: base, log }: BaseDeps, feed: ChangeFeedStore, holder: string): Organizations {
  const moves = new OrgMoveStore(base);
  const service = new OrganizationService(new OrganizationStore(base), config.orgCacheSeconds, feed, moves);
  const store: StoreContext = { ...base, ancestry: service, orgScoped: ORG_SCOPED_INDICES };
  service.moveTask = new OrgMoveTask(
    store,
    moves,
    // A few change-feed polls: every instance has applied the move to its tree (and stamps the new ancestry) by then.
    { settleMs: 3 * config.changePollMs + 1000, retryMs: 2000 },
    log,
    (orgId) => service.moveDone(orgId),
  );
  const ancestry = new AncestryKeeper(store, new LeaseStore(store), { everyMs: config.maintenance.schemaCheckSeconds * 1000, holder }, log);
  return { service, store, ancestry };
}
