/** The network-hosts index: one NetworkHost per org and MAC (or IP); the only code that touches it. */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, type Query, type SearchResult, type Stored, type WriteOptions } from '../../store/doc-store.js';
import { CoalescedWrites, GROUP_COMMIT } from '../../store/coalesced-writes.js';
import type { BatcherOptions } from '../../store/batcher.js';
import type { Conditional } from '../../store/doc-types.js';
import type { DocVersion } from '../../store/versions.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../store/page-query.js';
import type { NetworkHost } from './model.js';
import { PitSearch } from '../../store/scan.js';
import type { OrgScopedIndex } from '../../store/org-path.js';

export interface HostWrite {
  host: NetworkHost;
  /** Absent: create-only; present: a write conditional on that read. */
  cond?: { if_seq_no: number; if_primary_term: number };
}

export interface BulkHostOutcome {
  /** Ids whose write lost a race (created meanwhile, or changed since the read). */
  conflicted: string[];
  /** Ids that failed for another reason, with the reason. */
  failed: { id: string; reason: string }[];
}

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const NETWORK_HOSTS_ORG_SCOPE: OrgScopedIndex = { index: 'network-hosts', orgField: 'orgId' };

/** Heartbeats sight hosts on the hot path: their reads travel in one multi-get and their writes in one bulk. */
export const HOST_BATCHING: Record<'reads' | 'writes', BatcherOptions> = {
  reads: { maxBatch: 500, maxInFlight: 2 },
  writes: GROUP_COMMIT,
};

export class NetworkHostStore {
  private readonly docs: DocStore<NetworkHost>;
  private readonly writes: CoalescedWrites<NetworkHost>;
  constructor(ctx: StoreContext, batching = HOST_BATCHING) {
    this.docs = new DocStore<NetworkHost>(ctx, NETWORK_HOSTS_ORG_SCOPE.index, 'network host', {
      orgField: NETWORK_HOSTS_ORG_SCOPE.orgField,
      reads: batching.reads,
    });
    this.writes = new CoalescedWrites(this.docs, batching.writes);
  }

  get(id: string): Promise<Stored<NetworkHost> | undefined> {
    return this.docs.get(id);
  }

  getMany(ids: string[]): Promise<Stored<NetworkHost>[]> {
    return this.docs.getMany(ids);
  }

  /** Create-only; ConflictError when the host appeared meanwhile. */
  create(host: NetworkHost, opts?: WriteOptions): Promise<Stored<NetworkHost>> {
    return this.docs.create(host.id, host, opts);
  }

  /** Full write conditional on the read it follows; ConflictError when the host changed. */
  replace(host: NetworkHost, cond: { if_seq_no: number; if_primary_term: number }, opts?: WriteOptions): Promise<Stored<NetworkHost>> {
    return this.docs.put(host.id, host, { ...cond, ...opts });
  }

  /** A replace conditional on the read `cond` names, in the hot path's group commit (refresh=false); WriteConflictError when the host changed. */
  replaceCoalesced(host: NetworkHost, cond: Conditional): Promise<DocVersion> {
    return this.writes.replace(host.id, host, cond);
  }

  /** Writes many hosts in one bulk request (creates and conditional replaces). */
  async bulkWrite(writes: HostWrite[], opts: WriteOptions = {}): Promise<BulkHostOutcome> {
    const out: BulkHostOutcome = { conflicted: [], failed: [] };
    if (writes.length === 0) return out;
    const operations: estypes.BulkRequest<NetworkHost>['operations'] = writes.flatMap(
      (w): (estypes.BulkOperationContainer | NetworkHost)[] =>
        w.cond ? [{ index: { _id: w.host.id, ...w.cond } }, w.host] : [{ create: { _id: w.host.id } }, w.host],
    );
    const res = await this.docs.bulk(operations, opts);
    if (!res.errors) return out;
    for (const item of res.items) {
      const r = item.index ?? item.create;
      if (!r?.error) continue;
      const id = String(r._id);
      if (r.status === 409) out.conflicted.push(id);
      else out.failed.push({ id, reason: `${r.error.type}: ${r.error.reason ?? ''}` });
    }
    return out;
  }

  /** A search prepared for deep reads on a point in time (cursors and exports). */
  deep(query: Query, sort: estypes.SortCombinations[]): PitSearch<NetworkHost, NetworkHost> {
    return new PitSearch(this.docs, query, sort, (h) => h.doc);
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<NetworkHost>> {
    return this.docs.search({ query, ...page });
  }
}
