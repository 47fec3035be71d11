/**
 * The rollouts and rollout-targets indices, the only code that touches them. A rollout's
 * document is also its lease and its checkpoint, as a job's is: its driver writes it
 * conditionally on the seq_no it last read or wrote, so who loses a write has lost the rollout
 * (or it was paused, aborted or rolled back meanwhile). The targets are written in bulk, one
 * document per endpoint of a ring, keyed by rollout and endpoint: a replay after a crash
 * meets the documents already there.
 */
import { DocStore, type Query, type SearchResult, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../store/page-query.js';
import type { OrgScopedIndex } from '../../store/org-path.js';
import { DRIVEN_STATES, type RolloutDoc, type RolloutTargetDoc } from './model.js';
import { conditionOn } from '../../store/doc-types.js';

export type StoredRollout = Stored<RolloutDoc>;

/** Rollouts are read by subtree: they carry their organization's ancestry. */
export const ROLLOUTS_ORG_SCOPE: OrgScopedIndex = { index: 'rollouts', orgField: 'orgId' };

export class RolloutStore {
  private readonly docs: DocStore<RolloutDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<RolloutDoc>(ctx, ROLLOUTS_ORG_SCOPE.index, 'rollout', { orgField: ROLLOUTS_ORG_SCOPE.orgField });
  }

  /** Create-only; searchable when it returns (page search, other instances' drivers). */
  create(doc: RolloutDoc): Promise<StoredRollout> {
    return this.docs.create(doc.id, doc);
  }

  /** Realtime get. */
  get(id: string): Promise<StoredRollout | undefined> {
    return this.docs.get(id);
  }

  /**
   * Full write conditional on `read` (WriteConflictError when anyone wrote since). The driver's
   * checkpoints are not waited for (readers of one rollout use realtime get; the page search shows
   * them after the next refresh); an operator's move is (`visible`): the page search that follows shows it.
   */
  replace(doc: RolloutDoc, read: { seqNo: number; primaryTerm: number; writeIds?: string[] }, visible = false): Promise<StoredRollout> {
    return this.docs.put(doc.id, doc, { ...(visible ? {} : { refresh: false as const }), ...conditionOn(read) });
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<RolloutDoc>> {
    return this.docs.search({ query, ...page });
  }

  /** Rollouts `holder` drives or may take at `now`: RUNNING or ROLLING_BACK, its own, without a lease or with an expired one; oldest first. */
  async claimable(now: Date, holder: string, size: number): Promise<StoredRollout[]> {
    const res = await this.docs.search({
      query: {
        bool: {
          filter: [
            { terms: { state: [...DRIVEN_STATES] } },
            {
              bool: {
                should: [
                  { term: { leaseHolder: holder } },
                  { bool: { must_not: [{ exists: { field: 'leaseExpiresAt' } }] } },
                  { range: { leaseExpiresAt: { lt: now.toISOString() } } },
                ],
                minimum_should_match: 1,
              },
            },
          ],
        },
      },
      sort: [{ startedAt: 'asc' }, { id: 'asc' }],
      size,
      track_total_hits: false,
    });
    return res.items;
  }
}

/** The id of one endpoint's target document in a rollout. */
export function targetId(rolloutId: string, endpointId: string): string {
  return `${rolloutId}:${endpointId}`;
}

export class RolloutTargetStore {
  private readonly docs: DocStore<RolloutTargetDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<RolloutTargetDoc>(ctx, 'rollout-targets', 'rollout target');
  }

  /**
   * Creates the targets of a ring in one bulk request (not waited for visibility: the driver
   * makes them searchable once, with `visible`). A target that exists already (a replay after
   * a crash) is kept as it is.
   */
  async createMany(docs: RolloutTargetDoc[]): Promise<void> {
    if (docs.length === 0) return;
    const res = await this.docs.bulk(docs.flatMap((d) => [{ create: { _id: d.id } }, d]), { refresh: false });
    const failed = res.items.find((i) => i.create?.error && i.create.status !== 409);
    if (failed) throw new Error(`rollout targets not stored: ${failed.create?.error?.reason ?? 'unknown'}`);
  }

  /** Partial updates of many targets in one bulk request (last write wins: only the driver holding the lease writes them). */
  async updateMany(updates: { id: string; partial: Partial<RolloutTargetDoc> }[]): Promise<void> {
    if (updates.length === 0) return;
    const res = await this.docs.bulk(updates.flatMap((u) => [{ update: { _id: u.id } }, { doc: u.partial }]), { refresh: false });
    const failed = res.items.find((i) => i.update?.error);
    if (failed) throw new Error(`rollout targets not updated: ${failed.update?.error?.reason ?? 'unknown'}`);
  }

  /** Makes every target written before the call searchable. */
  visible(): Promise<void> {
    return this.docs.visible();
  }

  /** The targets of a rollout (one ring when given, a state when given), streamed in id order. */
  scan(rolloutId: string, opts: { ring?: number; state?: RolloutTargetDoc['state']; batchSize?: number } = {}): AsyncGenerator<Stored<RolloutTargetDoc>[]> {
    const filter: Query[] = [{ term: { rolloutId } }];
    if (opts.ring !== undefined) filter.push({ term: { ring: opts.ring } });
    if (opts.state) filter.push({ term: { state: opts.state } });
    return this.docs.scan({ bool: { filter } }, { batchSize: opts.batchSize ?? 1000, sort: [{ id: 'asc' }] });
  }

  /** How many targets of a rollout's ring (of a state when given). */
  count(rolloutId: string, ring: number, state?: RolloutTargetDoc['state']): Promise<number> {
    const filter: Query[] = [{ term: { rolloutId } }, { term: { ring } }];
    if (state) filter.push({ term: { state } });
    return this.docs.count({ bool: { filter } });
  }
}
