/** The network-heartbeats index: every NetworkHeartbeat, time-ordered; the only code that touches it. */
import crypto from 'node:crypto';
import { DocStore, type Query, type SearchResult } from '../../store/doc-store.js';
import { CoalescedWrites } from '../../store/coalesced-writes.js';
import type { DocVersion } from '../../store/versions.js';
import type { StoreContext } from '../../store/client.js';
import { RolloverAlias, type GenerationalIndex, type Generation } from '../../store/generations.js';
import type { PageQuery } from '../../store/page-query.js';
import type { NetworkHeartbeatDoc } from './model.js';
import type { OrgScopedIndex } from '../../store/org-path.js';

/**
 * A retried heartbeat (same endpoint, same timestamp) overwrites itself instead of
 * duplicating; hashed because the endpoint id is not looked up and could exceed the
 * 512-byte document id limit.
 */
export function heartbeatId(endpointId: string, timestamp: string): string {
  return crypto.createHash('sha256').update(`${endpointId}\u0000${new Date(timestamp).toISOString()}`).digest('hex').slice(0, 40);
}

/** One concrete index behind the heartbeats alias (a rollover generation). */
export type HeartbeatGeneration = Generation;

/**
 * The alias is a rollover write alias: writes go to the newest generation, reads
 * (searches) span them all, and whole old generations are deleted by HeartbeatRetention.
 */
/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const HEARTBEATS_ORG_SCOPE: OrgScopedIndex = { index: 'network-heartbeats', orgField: 'orgId' };

export class HeartbeatStore implements GenerationalIndex {
  private readonly docs: DocStore<NetworkHeartbeatDoc>;
  private readonly generationsOf: RolloverAlias;
  private readonly writes: CoalescedWrites<NetworkHeartbeatDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<NetworkHeartbeatDoc>(ctx, HEARTBEATS_ORG_SCOPE.index, 'network heartbeat', { orgField: HEARTBEATS_ORG_SCOPE.orgField });
    this.writes = new CoalescedWrites(this.docs);
    this.generationsOf = new RolloverAlias(ctx, 'network-heartbeats', 'timestamp');
  }

  /** Rolls the write alias over to a new generation when the current one is older than `maxAge` or larger than `maxSize` (always without conditions). */
  rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean> {
    return this.generationsOf.rollover(conditions);
  }

  /** The generations behind the alias with their newest heartbeat. */
  generations(): Promise<HeartbeatGeneration[]> {
    return this.generationsOf.generations();
  }

  /** Deletes one whole generation (never the write index: the caller checks). */
  deleteGeneration(index: string): Promise<void> {
    return this.generationsOf.deleteGeneration(index);
  }

  /** Hot-path write: keyed (idempotent), without a forced refresh, in one bulk with the concurrent heartbeats. */
  put(doc: NetworkHeartbeatDoc): Promise<DocVersion> {
    return this.writes.put(doc.id, doc);
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<NetworkHeartbeatDoc>> {
    return this.docs.search({ query, ...page });
  }
}
