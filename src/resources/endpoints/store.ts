/** The endpoints index (every family): the only code that touches it. */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, LAST_WRITE_WINS_RETRIES, type Query, type SearchResult, type Stored, type WriteOptions } from '../../store/doc-store.js';
import { readRetries, type StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../http/paging.js';
import { BadRequestError } from '../../errors.js';
import { MAX_AGGREGATION_BUCKETS } from '../../http/limits.js';
import type { EndpointDoc, EndpointRecord } from './model.js';
import { storeCall } from '../../store/errors.js';
import { Batcher, type BatcherOptions, type ItemOutcome } from '../../store/batcher.js';
import { itemError } from '../../store/item-errors.js';
import type { EndpointPresence } from './presence.js';

/** Maps a stored document to the API record: internal fields dropped, integer version added. */
export function toEndpointRecord(hit: Stored<EndpointDoc>): EndpointRecord {
  return hitToEndpointRecord({ ...hit, doc: { ...hit.doc } });
}

/**
 * toEndpointRecord for hits nobody else holds (the hits of a search page): the document
 * becomes the record in place, internal fields left undefined (absent in JSON), with no copy.
 * A search page maps 20 of them per request; the copies were 4 % of its CPU in the benchmark.
 * toEndpointRecord is this on a copy, for documents still used afterwards.
 */
export function hitToEndpointRecord(hit: Stored<EndpointDoc>): EndpointRecord {
  const rec = hit.doc as EndpointDoc & { version: number };
  if (rec.interfaces !== undefined) rec.interfaces = undefined;
  if (rec.scanner !== undefined) rec.scanner = undefined;
  if (rec.deleted === undefined) rec.deleted = false;
  rec.version = hit.version;
  return rec;
}

/** Filter that hides soft-deleted endpoints. */
export const NOT_DELETED: Query = { bool: { must_not: [{ term: { deleted: true } }] } };

/** A partial update of connection bookkeeping (connect, disconnect, uninstall, fim-hoh). */
export interface Bookkeeping {
  id: string;
  partial: Partial<EndpointDoc>;
}

type SearchBody = Omit<estypes.SearchRequest, 'index'>;

/**
 * How concurrent hot-path calls are coalesced (see store/batcher.ts and docs/decisions.md):
 * bookkeeping writes into one bulk request (group commit), gets into one multi-get,
 * searches into one multi-search.
 */
export const ENDPOINT_BATCHING: Record<'bookkeeping' | 'reads' | 'searches', BatcherOptions> = {
  // One bulk at a time: concurrent bulks to the one shard contend with each other; serialized,
  // the p99 at 70 % of the maximum rate fell from ~70 to ~30 ms in the benchmark.
  bookkeeping: { maxBatch: 500, maxInFlight: 1 },
  reads: { maxBatch: 500, maxInFlight: 2 },
  searches: { maxBatch: 50, maxInFlight: 3 },
};

function versionOf(r: { _seq_no?: number; _primary_term?: number; _version?: number }): { seqNo: number; primaryTerm: number; version: number } {
  return { seqNo: r._seq_no ?? -1, primaryTerm: r._primary_term ?? 0, version: r._version ?? 0 };
}

export class EndpointStore {
  readonly docs: DocStore<EndpointDoc>;
  private readonly groupCommit: Batcher<Bookkeeping, { deleted: boolean }>;
  private readonly reads: Batcher<string, Stored<EndpointDoc> | undefined>;
  private readonly searches: Batcher<SearchBody, SearchResult<EndpointDoc>>;
  /** Presence (issue 16): applied to every document read, and stamped by every bookkeeping write. */
  presence?: EndpointPresence;

  constructor(
    private readonly ctx: StoreContext,
    batching = ENDPOINT_BATCHING,
  ) {
    this.docs = new DocStore<EndpointDoc>(ctx, 'endpoints', 'endpoint');
    this.groupCommit = new Batcher((items) => this.bookkeepBulk(items), batching.bookkeeping);
    this.reads = new Batcher((ids) => this.mget(ids), batching.reads);
    this.searches = new Batcher((bodies) => this.msearch(bodies), batching.searches);
  }

  /**
   * Realtime get, deleted ones included (services decide visibility). Concurrent gets travel
   * in one multi-get (realtime too), so a busy service pays one round trip for many.
   */
  get(id: string): Promise<Stored<EndpointDoc> | undefined> {
    return this.reads.submit(id);
  }

  private async mget(ids: string[]): Promise<ItemOutcome<Stored<EndpointDoc> | undefined>[]> {
    const res = await storeCall(() =>
      this.ctx.client.mget<EndpointDoc>({ index: this.docs.index, ids }, { ...readRetries, ignore: [404] }),
    );
    // A missing index answers 404 as a whole: nothing is found (as a single get with ignore 404).
    if (!Array.isArray(res.docs)) return ids.map(() => ({ ok: true, value: undefined }));
    return res.docs.map((d): ItemOutcome<Stored<EndpointDoc> | undefined> => {
      if ('error' in d) {
        if (d.error.type === 'index_not_found_exception') return { ok: true, value: undefined };
        return { ok: false, error: itemError(500, d.error) };
      }
      if (!d.found || !d._source) return { ok: true, value: undefined };
      return { ok: true, value: { id: d._id, doc: this.read(d._source), ...versionOf(d) } };
    });
  }

  /**
   * Group commit of connection bookkeeping: concurrent partial updates go out in one bulk
   * request without a forced refresh. Each caller is answered only with its own item's
   * result, after Elasticsearch acknowledged the request: whether the (updated) endpoint is
   * soft-deleted, or the error its own update would have raised (NotFoundError when the
   * endpoint does not exist, ConflictError, ServiceUnavailableError).
   */
  bookkeep(id: string, partial: Partial<EndpointDoc>): Promise<{ deleted: boolean }> {
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

  private async bookkeepBulk(items: Bookkeeping[]): Promise<ItemOutcome<{ deleted: boolean }>[]> {
    // Every bookkeeping write is a sign of life: lastSeen rides on the same bulk item.
    const lastSeen = this.presence ? new Date(this.presence.now()).toISOString() : undefined;
    const res = await this.docs.bulk(
      items.flatMap((it) => [
        { update: { _id: it.id, retry_on_conflict: LAST_WRITE_WINS_RETRIES } },
        { doc: lastSeen ? { ...it.partial, lastSeen } : it.partial, _source: { includes: ['deleted'] } },
      ]),
      { refresh: false },
    );
    return bookkeepingOutcomes(items, res);
  }

  private async msearch(bodies: SearchBody[]): Promise<ItemOutcome<SearchResult<EndpointDoc>>[]> {
    const res = await storeCall(() =>
      this.ctx.client.msearch<EndpointDoc>(
        {
          index: this.docs.index,
          // Every search of the batch starts at once (as separate requests would); the default
          // runs them in waves of the search pool size, so the first would wait for the last.
          max_concurrent_searches: bodies.length,
          searches: bodies.flatMap((b) => [{}, { seq_no_primary_term: true, version: true, ...b } as estypes.SearchSearchRequestBody]),
        },
        readRetries,
      ),
    );
    return res.responses.map((r): ItemOutcome<SearchResult<EndpointDoc>> => {
      if ('error' in r) return { ok: false, error: itemError(r.status, r.error) };
      const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0);
      return {
        ok: true,
        value: {
          total,
          items: r.hits.hits.map((h) => ({ id: h._id as string, doc: this.read(h._source as EndpointDoc), ...versionOf(h) })),
          aggregations: r.aggregations,
        },
      };
    });
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
  search(query: Query, page: PageQuery): Promise<SearchResult<EndpointDoc>> {
    return this.searches.submit({ query, ...page });
  }

  count(query: Query): Promise<number> {
    return this.docs.count(query);
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
    const res = await this.searches.submit({ query, size: 0, track_total_hits: false, aggs: { buckets: { filters: { filters } } } });
    const buckets = (res.aggregations?.buckets as estypes.AggregationsFiltersAggregate | undefined)?.buckets as
      | Record<string, estypes.AggregationsFiltersBucket>
      | undefined;
    return Object.fromEntries(Object.keys(filters).map((k) => [k, buckets?.[k]?.doc_count ?? 0])) as Record<K, number>;
  }

  /**
   * Every bucket of a terms aggregation (composite paging: no top-N cut), up to `maxBuckets`:
   * more → 400 (narrow the criteria), decided before the rest is read.
   */
  async termsAll(query: Query, field: string, maxBuckets = MAX_AGGREGATION_BUCKETS): Promise<{ key: string; count: number }[]> {
    const out: { key: string; count: number }[] = [];
    let after: Record<string, estypes.FieldValue> | undefined;
    for (;;) {
      const res = await this.searches.submit({
        query,
        size: 0,
        track_total_hits: false,
        aggs: {
          buckets: { composite: { size: 1000, sources: [{ key: { terms: { field } } }], ...(after ? { after } : {}) } },
        },
      });
      const agg = res.aggregations?.buckets as estypes.AggregationsCompositeAggregate | undefined;
      const buckets = (agg?.buckets ?? []) as estypes.AggregationsCompositeBucket[];
      for (const b of buckets) out.push({ key: String(b.key.key), count: b.doc_count });
      if (out.length > maxBuckets) {
        throw new BadRequestError(`more than ${maxBuckets} distinct values of ${field} match; narrow the criteria`);
      }
      if (buckets.length < 1000 || !agg?.after_key) break;
      after = agg.after_key;
    }
    return out;
  }

  /** Sum of a numeric field over matching documents. */
  async sum(query: Query, field: string): Promise<number> {
    const res = await this.searches.submit({ query, size: 0, track_total_hits: false, aggs: { total: { sum: { field } } } });
    return (res.aggregations?.total as estypes.AggregationsSumAggregate | undefined)?.value ?? 0;
  }

  /** Partial updates of many endpoints in one bulk request; returns the ids that failed. */
  async bulkPatch(items: { id: string; partial: Partial<EndpointDoc> }[], opts: WriteOptions = {}): Promise<string[]> {
    if (items.length === 0) return [];
    const res = await this.docs.bulk(
      items.flatMap((i) => [{ update: { _id: i.id } }, { doc: i.partial }]),
      opts,
    );
    return res.errors ? res.items.filter((it) => it.update?.error).map((it) => String(it.update?._id)) : [];
  }

  /** Raw bulk (seeding, group commit): operations in the bulk API's shape. */
  bulk(operations: estypes.BulkRequest['operations'], opts: WriteOptions = {}): Promise<estypes.BulkResponse> {
    return this.docs.bulk(operations, opts);
  }

  /** Makes the writes acknowledged before the call searchable (after writes made with `refresh: false`). */
  visible(): Promise<void> {
    return this.docs.visible();
  }

  /** Refreshes the index (ops tooling after a bulk load; never on a request path). */
  async refresh(): Promise<void> {
    await storeCall(() => this.ctx.client.indices.refresh({ index: this.docs.index }));
  }
}

/** Bulk update results → one outcome per bookkeeping item (exported for its unit test). */
export function bookkeepingOutcomes(items: Bookkeeping[], res: estypes.BulkResponse): ItemOutcome<{ deleted: boolean }>[] {
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
