/** The endpoints index (every family): the only code that touches it. */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, LAST_WRITE_WINS_RETRIES, type Query, type SearchResult, type Stored, type WriteOptions } from '../../store/doc-store.js';
import { PitSearch } from '../../store/scan.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../store/page-query.js';
import { BadRequestError } from '../../errors.js';
import { MAX_AGGREGATION_BUCKETS } from '../../domain.js';
import { compositeAll, compositeChunk, type TermCount } from '../../store/aggregations.js';
import type { EndpointDoc, EndpointRecord, PresenceView } from './model.js';
import { Batcher, type BatcherOptions, type ItemOutcome } from '../../store/batcher.js';
import { GROUP_COMMIT } from '../../store/coalesced-writes.js';
import { itemError } from '../../store/item-errors.js';
import type { OrgScopedIndex } from '../../store/org-path.js';

/** Maps a stored document to the API record: internal fields dropped, integer version added. */
export function toEndpointRecord(hit: Stored<EndpointDoc>): EndpointRecord {
  return toEndpointRecordInPlace({ ...hit, doc: { ...hit.doc } });
}

/**
 * toEndpointRecord without the copy, for hits nobody else holds (the hits of a search page):
 * the document itself becomes the record, internal fields left undefined (absent in JSON).
 */
export function toEndpointRecordInPlace(hit: Stored<EndpointDoc>): EndpointRecord {
  const rec = hit.doc as EndpointDoc & { version: number };
  if (rec.interfaces !== undefined) rec.interfaces = undefined;
  if (rec.scanner !== undefined) rec.scanner = undefined;
  if (rec.deleted === undefined) rec.deleted = false;
  rec.version = hit.version;
  return rec;
}

/** A connection-state update (connect, disconnect, uninstall, fim-hoh): a partial update of one endpoint. */
export interface ConnectionStateUpdate {
  id: string;
  partial: Partial<EndpointDoc>;
}

/**
 * How concurrent hot-path calls are coalesced (see store/batcher.ts, docs/adr/0007-group-commit-of-connection-state.md and docs/adr/0008-coalesced-reads-and-request-cache.md):
 * connection-state updates into one bulk request (group commit), gets into one multi-get,
 * searches into one multi-search (a long answer read search by search: docs/adr/0144-a-multi-search-answer-read-search-by-search.md).
 */
export const ENDPOINT_BATCHING: Record<'connectionState' | 'reads' | 'searches', BatcherOptions> = {
  connectionState: GROUP_COMMIT,
  reads: { maxBatch: 500, maxInFlight: 2 },
  searches: { maxBatch: 50, maxInFlight: 3 },
};

/** Composite-aggregation buckets per round trip. */
const COMPOSITE_CHUNK = 1000;

/**
 * Presence as the store and its query builders see it (presence.ts's EndpointPresence): how a
 * read shows a record, the clock of lastSeen, and the view a query decides status with.
 */
export interface PresenceLens {
  apply<D extends Pick<EndpointDoc, 'connectionStatus' | 'lastSeen' | 'orgId'>>(doc: D): D;
  now(): number;
  view(): Promise<PresenceView>;
}

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const ENDPOINTS_ORG_SCOPE: OrgScopedIndex = { index: 'endpoints', orgField: 'orgId' };

export class EndpointStore {
  private readonly docs: DocStore<EndpointDoc>;
  private readonly groupCommit: Batcher<ConnectionStateUpdate, { deleted: boolean }>;
  /** Presence (presence.ts): applied to every document read, and stamped by every connection-state write. */
  presence?: PresenceLens;

  constructor(ctx: StoreContext, batching = ENDPOINT_BATCHING) {
    this.docs = new DocStore<EndpointDoc>(ctx, ENDPOINTS_ORG_SCOPE.index, 'endpoint', { orgField: ENDPOINTS_ORG_SCOPE.orgField, reads: batching.reads, searches: batching.searches });
    this.groupCommit = new Batcher((items) => this.updateConnectionStates(items), { name: 'group commit endpoints', ...batching.connectionState });
  }

  /** The alias of the index (for tooling that watches its requests). */
  get index(): string {
    return this.docs.index;
  }

  /** Realtime get, deleted ones included (services decide visibility); concurrent gets travel in one multi-get. */
  async get(id: string): Promise<Stored<EndpointDoc> | undefined> {
    const hit = await this.docs.get(id);
    if (hit) this.read(hit.doc);
    return hit;
  }

  /**
   * Group commit of connection-state updates: concurrent partial updates go out in one bulk
   * request without a forced refresh. Each caller is answered only with its own item's
   * result, after Elasticsearch acknowledged the request: whether the (updated) endpoint is
   * soft-deleted, or the error its own update would have raised (NotFoundError when the
   * endpoint does not exist, ConflictError, ServiceUnavailableError).
   */
  updateConnectionState(id: string, partial: Partial<EndpointDoc>): Promise<{ deleted: boolean }> {
    return this.groupCommit.submit({ id, partial });
  }

  /** A sign of life alone (presence.ts): a lastSeen-only item of the same group commit. */
  touch(id: string): Promise<{ deleted: boolean }> {
    return this.groupCommit.submit({ id, partial: {} });
  }

  /** Presence applied to a document read from the index (in place). */
  private read(doc: EndpointDoc): EndpointDoc {
    return this.presence ? this.presence.apply(doc) : doc;
  }

  private async updateConnectionStates(items: ConnectionStateUpdate[]): Promise<ItemOutcome<{ deleted: boolean }>[]> {
    // Every connection-state write is a sign of life: lastSeen rides on the same bulk item.
    const lastSeen = this.presence ? new Date(this.presence.now()).toISOString() : undefined;
    const res = await this.docs.bulk(
      items.flatMap((it) => [
        { update: { _id: it.id, retry_on_conflict: LAST_WRITE_WINS_RETRIES } },
        { doc: lastSeen ? { ...it.partial, lastSeen } : it.partial, _source: { includes: ['deleted'] } },
      ]),
      { refresh: false },
    );
    return connectionStateOutcomes(items, res);
  }

  async getMany(ids: string[]): Promise<Stored<EndpointDoc>[]> {
    const hits = await this.docs.getMany(ids);
    for (const h of hits) this.read(h.doc);
    return hits;
  }

  create(doc: EndpointDoc, opts?: WriteOptions): Promise<Stored<EndpointDoc>> {
    return this.docs.create(doc.id, doc, opts);
  }

  /** Full replace, conditional on the seq_no/primary_term of the read it follows. */
  replace(
    doc: EndpointDoc,
    cond: { if_seq_no: number; if_primary_term: number },
    opts?: WriteOptions,
  ): Promise<Stored<EndpointDoc>> {
    return this.docs.put(doc.id, doc, { ...cond, ...opts });
  }

  /** One partial update, no read in Node; 404 when the endpoint does not exist. */
  patch(
    id: string,
    partial: Partial<EndpointDoc>,
    opts: WriteOptions & { if_seq_no?: number; if_primary_term?: number } = {},
  ): Promise<Stored<EndpointDoc>> {
    return this.docs.patch(id, partial, opts);
  }

  /** One search; concurrent ones travel in one multi-search. */
  async search(query: Query, page: PageQuery): Promise<SearchResult<EndpointDoc>> {
    const res = await this.docs.search({ query, ...page });
    for (const h of res.items) this.read(h.doc);
    return res;
  }

  count(query: Query): Promise<number> {
    return this.docs.count(query);
  }

  /** A search prepared for cursors and exports: pages of records on a point in time, in `sort` (ending in `id`). */
  pitSearch(query: Query, sort: estypes.SortCombinations[]): PitSearch<EndpointDoc, EndpointRecord> {
    return new PitSearch(this.docs, query, sort, (hit) => {
      this.read(hit.doc);
      return toEndpointRecord(hit);
    });
  }

  /** Streams matching documents (PIT + search_after), sorted by id. */
  async *scan(query: Query, batchSize = 1000): AsyncGenerator<Stored<EndpointDoc>[]> {
    for await (const batch of this.docs.scan(query, { batchSize, sort: [{ id: 'asc' }] })) {
      for (const h of batch) this.read(h.doc);
      yield batch;
    }
  }

  /** Documents matching each named filter, in one search (a `filters` aggregation). */
  async filterCounts<K extends string>(query: Query, filters: Record<K, Query>): Promise<Record<K, number>> {
    const res = await this.docs.search({ query, size: 0, track_total_hits: false, aggs: { buckets: { filters: { filters } } } });
    const buckets = (res.aggregations?.buckets as estypes.AggregationsFiltersAggregate | undefined)?.buckets as
      | Record<string, estypes.AggregationsFiltersBucket>
      | undefined;
    return Object.fromEntries(Object.keys(filters).map((k) => [k, buckets?.[k]?.doc_count ?? 0])) as Record<K, number>;
  }

  /**
   * Every matching document in id order: one search when they fit in `firstSize` (the usual
   * case), else streamed with a point in time in batches of `scanBatch`.
   */
  async allMatching(query: Query, firstSize: number, scanBatch = firstSize): Promise<Stored<EndpointDoc>[]> {
    const first = await this.search(query, { from: 0, size: firstSize, sort: [{ id: 'asc' }], track_total_hits: true });
    if (first.total <= first.items.length) return first.items;
    const out: Stored<EndpointDoc>[] = [];
    for await (const batch of this.scan(query, scanBatch)) out.push(...batch);
    return out;
  }

  /**
   * Every bucket of a terms aggregation (composite paging: no top-N cut), up to `maxBuckets`:
   * more → 400 (narrow the criteria), decided before the rest is read.
   */
  termsAll(query: Query, field: string, maxBuckets = MAX_AGGREGATION_BUCKETS): Promise<TermCount[]> {
    return compositeAll(
      async (after, chunk) => {
        const res = await this.docs.search({
          query,
          size: 0,
          track_total_hits: false,
          aggs: { buckets: { composite: { size: chunk, sources: [{ key: { terms: { field } } }], ...(after ? { after } : {}) } } },
        });
        const { buckets, after: next } = compositeChunk(res.aggregations?.buckets);
        return { buckets: buckets.map((b) => ({ key: String(b.key.key), count: b.doc_count })), after: next };
      },
      {
        chunk: COMPOSITE_CHUNK,
        max: maxBuckets,
        tooMany: () => new BadRequestError(`more than ${maxBuckets} distinct values of ${field} match; narrow the criteria`),
      },
    );
  }

  /** Sum of a numeric field over matching documents. */
  async sum(query: Query, field: string): Promise<number> {
    const res = await this.docs.search({ query, size: 0, track_total_hits: false, aggs: { total: { sum: { field } } } });
    return (res.aggregations?.total as estypes.AggregationsSumAggregate | undefined)?.value ?? 0;
  }

  /**
   * Writes each document as it was read with a change (the device migration's mark), in one
   * bulk request without waiting for visibility, each conditional on the seq_no/primary term
   * of its read; answers the bulk items (a document changed meanwhile fails with a conflict).
   */
  async replaceAsRead(items: { hit: Stored<EndpointDoc>; doc: EndpointDoc }[]): Promise<estypes.BulkResponseItem[]> {
    if (items.length === 0) return [];
    const res = await this.docs.bulk(
      items.flatMap(({ hit, doc }) => [{ index: { _id: hit.id, if_seq_no: hit.seqNo, if_primary_term: hit.primaryTerm } }, doc]),
      { refresh: false },
    );
    return res.items.map((it) => it.index).filter((r): r is estypes.BulkResponseItem => r !== undefined);
  }

  /** Makes the writes acknowledged before the call searchable (after writes made with `refresh: false`). */
  visible(): Promise<void> {
    return this.docs.visible();
  }

  /** Refreshes the index whatever the visibility policy (the device migration's marks; never on a request path). */
  refresh(): Promise<void> {
    return this.docs.refresh();
  }
}

/** Bulk update results → one outcome per connection-state update (exported for its unit test). */
export function connectionStateOutcomes(items: ConnectionStateUpdate[], res: estypes.BulkResponse): ItemOutcome<{ deleted: boolean }>[] {
  if (res.items.length !== items.length) {
    const err = new Error(`bulk answered ${res.items.length} items for ${items.length}`);
    return items.map(() => ({ ok: false, error: err }));
  }
  return res.items.map((entry, k): ItemOutcome<{ deleted: boolean }> => {
    const r = entry.update;
    if (!r) return { ok: false, error: new Error('bulk item without an update result') };
    if (r.error || r.status >= 300) return { ok: false, error: itemError(r.status, r.error, `endpoint ${items[k].id} not found`) };
    const source = r.get?._source as Partial<EndpointDoc> | undefined;
    return { ok: true, value: { deleted: source?.deleted === true } };
  });
}
