/** The software-inventory index: the only code that touches it. */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, type Query, type SearchResult, type Sort, type Stored, type WriteOptions } from '../../store/doc-store.js';
import { readRetries, type StoreContext } from '../../store/client.js';
import { storeCall } from '../../store/errors.js';
import { NotFoundError, ServiceUnavailableError } from '../../errors.js';
import type { PageQuery } from '../../store/page-query.js';
import type { SoftwareInventoryDoc } from './model.js';
import type { OrgScopedIndex } from '../../store/org-path.js';

/** Bulk actions per request: a full report of 10,000 new entries is one request. */
const BULK_ACTIONS = 10_000;
/** Hits per search round trip when reading an endpoint's inventory or a bounded list. */
const READ_BATCH = 10_000;
/** Buckets per composite-aggregation round trip. */
export const COMPOSITE_CHUNK = 10_000;
/** Cardinality is exact in practice below this many distinct values (Elasticsearch's maximum). */
const CARDINALITY_PRECISION = 40_000;
/** Distinct pairs counted exactly; beyond, totalCount is the cardinality estimate. */
export const EXACT_PAIRS = 50_000;

type BulkOps = NonNullable<estypes.BulkRequest['operations']>;

export interface PairBucket {
  name: string;
  version: string;
  count: number;
}

export type SourceOrder = 'asc' | 'desc';

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const SOFTWARE_INVENTORY_ORG_SCOPE: OrgScopedIndex = { index: 'software-inventory', orgField: 'orgId' };

export class SoftwareInventoryStore {
  readonly docs: DocStore<SoftwareInventoryDoc>;

  constructor(private readonly ctx: StoreContext) {
    this.docs = new DocStore<SoftwareInventoryDoc>(ctx, SOFTWARE_INVENTORY_ORG_SCOPE.index, 'installed software', { orgField: SOFTWARE_INVENTORY_ORG_SCOPE.orgField });
  }

  /** Realtime multi-get by id, in the order asked; absent ids skipped. */
  getMany(ids: string[]): Promise<Stored<SoftwareInventoryDoc>[]> {
    return this.docs.getMany(ids);
  }

  /**
   * Every document matching `query`, read with search_after in batches of 10,000 sorted by
   * id (one round trip for any inventory a full report can produce).
   */
  async allMatching(query: Query): Promise<SoftwareInventoryDoc[]> {
    const out: SoftwareInventoryDoc[] = [];
    let after: estypes.SortResults | undefined;
    for (;;) {
      const res = await this.docs.search({
        query,
        size: READ_BATCH,
        sort: [{ id: 'asc' }],
        track_total_hits: false,
        seq_no_primary_term: false,
        version: false,
        ...(after ? { search_after: after } : {}),
      });
      for (const h of res.items) out.push(h.doc);
      if (res.items.length < READ_BATCH) return out;
      after = [res.items[res.items.length - 1].doc.id];
    }
  }

  /**
   * Up to `cap` matching documents in `sort` order (which must end in `id`): one round trip
   * when they fit in one batch, otherwise a point-in-time scan. `items` is undefined when
   * more than `cap` match, so callers can refuse before reading them.
   */
  async bounded(
    query: Query,
    sort: estypes.SortCombinations[],
    cap: number,
  ): Promise<{ total: number; items?: SoftwareInventoryDoc[] }> {
    const first = await this.docs.search({ query, sort, size: Math.min(READ_BATCH, cap), track_total_hits: true });
    if (first.total > cap) return { total: first.total };
    if (first.items.length >= first.total) return { total: first.total, items: first.items.map((h) => h.doc) };
    const items: SoftwareInventoryDoc[] = [];
    for await (const batch of this.docs.scan(query, { batchSize: READ_BATCH, sort: sort as Sort })) {
      for (const h of batch) items.push(h.doc);
      if (items.length > cap) return { total: items.length };
    }
    return { total: items.length, items };
  }

  /** One page of documents. */
  search(query: Query, page: PageQuery): Promise<SearchResult<SoftwareInventoryDoc>> {
    return this.docs.search({ query, ...page });
  }

  count(query: Query): Promise<number> {
    return this.docs.count(query);
  }

  /** Streams matching documents (point in time + search_after) in `sort` order. */
  scan(query: Query, sort: estypes.SortCombinations[], batchSize = 1000): AsyncGenerator<Stored<SoftwareInventoryDoc>[]> {
    return this.docs.scan(query, { batchSize, sort: sort as Sort });
  }

  /**
   * Adds or refreshes one entry in one round trip: `fields` overwrite (null removes an
   * optional field), `upsert` is written when the entry is new (so firstSeen survives).
   */
  async upsert(
    id: string,
    fields: Record<string, unknown>,
    upsert: SoftwareInventoryDoc,
    opts: WriteOptions = {},
  ): Promise<SoftwareInventoryDoc> {
    const res = await this.docs.patch(id, fields, { ...opts, upsert });
    return res.doc;
  }

  /** Hard delete of one entry; false when it did not exist. */
  async deleteIfExists(id: string, opts: WriteOptions = {}): Promise<boolean> {
    try {
      await this.docs.delete(id, opts);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /**
   * Writes full documents and deletes ids with the bulk API: one request for up to 10,000
   * actions, chunked beyond. Each chunk is made visible as `opts` asks, so a call that fails after
   * an earlier chunk landed leaves that chunk searchable for the retry's diff
   * (docs/adr/0153-a-failed-write-is-made-visible-before-its-error.md); a report past 10,000
   * actions pays one shared refresh more. A deletion of an absent id is not a
   * failure (a concurrent report removed it first); any other item failure fails the call
   * (503 when Elasticsearch pushed back, so the agent retries; the report is idempotent).
   */
  async bulkWrite(upserts: SoftwareInventoryDoc[], deletes: string[], opts: WriteOptions = {}): Promise<void> {
    const actions: BulkOps = [];
    const chunks: BulkOps[] = [];
    let inChunk = 0;
    const push = (...ops: BulkOps): void => {
      actions.push(...ops);
      inChunk++;
      if (inChunk === BULK_ACTIONS) {
        chunks.push(actions.splice(0, actions.length));
        inChunk = 0;
      }
    };
    for (const d of upserts) push({ index: { _id: d.id } }, d);
    for (const id of deletes) push({ delete: { _id: id } });
    if (actions.length > 0) chunks.push(actions);
    for (const chunk of chunks) {
      const res = await this.docs.bulk(chunk, opts);
      if (!res.errors) continue;
      const failed = res.items
        .map((it) => it.index ?? it.delete ?? it.create ?? it.update)
        .filter((r): r is estypes.BulkResponseItem => !!r && !!r.error && !(r.status === 404 && r.result === 'not_found'));
      if (failed.length === 0) continue;
      if (failed.some((r) => r.status === 429 || r.status >= 503)) throw new ServiceUnavailableError();
      throw new Error(
        `software inventory bulk write: ${failed.length} of ${res.items.length} actions failed, first: ${JSON.stringify(failed[0].error)}`,
      );
    }
  }

  /**
   * A size-0 aggregation search. With `distinct`, it also counts the distinct pairs: exactly
   * (a terms aggregation of up to EXACT_PAIRS buckets counted by a stats_bucket pipeline,
   * the buckets themselves cut from the response by filter_path), and beyond that with a
   * cardinality estimate (HyperLogLog++: its small-set mode hashes to 32 bits, so it can be
   * off by one or two already at ~10,000 values, which is why it is only the fallback).
   */
  private async aggregate(
    query: Query,
    aggs: Record<string, estypes.AggregationsAggregationContainer>,
    distinct: boolean,
  ): Promise<{ aggs: Record<string, estypes.AggregationsAggregate>; distinct?: number }> {
    const all: Record<string, estypes.AggregationsAggregationContainer> = { ...aggs };
    if (distinct) {
      all.exact = { terms: { field: 'nameVersion', size: EXACT_PAIRS, shard_size: EXACT_PAIRS, order: { _key: 'asc' } } };
      all.exactCount = { stats_bucket: { buckets_path: 'exact>_count' } };
      all.estimate = { cardinality: { field: 'nameVersion', precision_threshold: CARDINALITY_PRECISION } };
    }
    const res = await storeCall(() =>
      this.ctx.client.search(
        {
          index: this.docs.index,
          query,
          size: 0,
          track_total_hits: false,
          aggs: all,
          filter_path: [
            ...Object.keys(aggs).map((k) => `aggregations.${k}`),
            'aggregations.exact.sum_other_doc_count',
            'aggregations.exactCount.count',
            'aggregations.estimate.value',
          ],
        },
        readRetries,
      ),
    );
    const out = res.aggregations ?? {};
    if (!distinct) return { aggs: out };
    const exact = out.exact as { sum_other_doc_count?: number } | undefined;
    const counted = (out.exactCount as { count?: number } | undefined)?.count ?? 0;
    const estimate = (out.estimate as estypes.AggregationsCardinalityAggregate | undefined)?.value ?? 0;
    const complete = (exact?.sum_other_doc_count ?? 0) === 0;
    return { aggs: out, distinct: complete ? counted : Math.max(estimate, EXACT_PAIRS + 1) };
  }

  /**
   * One composite-aggregation round trip over (name, version) buckets in the given source
   * order; with `distinct`, also the number of distinct pairs matching the query.
   */
  async pairsComposite(
    query: Query,
    sources: { field: 'name' | 'version'; order: SourceOrder }[],
    size: number,
    after: Record<string, estypes.FieldValue> | undefined,
    distinct: boolean,
  ): Promise<{ buckets: PairBucket[]; after?: Record<string, estypes.FieldValue>; distinct?: number }> {
    const res = await this.aggregate(
      query,
      {
        pairs: {
          composite: {
            size,
            sources: sources.map((s) => ({ [s.field]: { terms: { field: s.field, order: s.order } } })),
            ...(after ? { after } : {}),
          },
        },
      },
      distinct,
    );
    const agg = res.aggs.pairs as estypes.AggregationsCompositeAggregate | undefined;
    const buckets = ((agg?.buckets ?? []) as estypes.AggregationsCompositeBucket[]).map((b) => ({
      name: String(b.key.name),
      version: String(b.key.version),
      count: b.doc_count,
    }));
    return { buckets, after: agg?.after_key, ...(distinct ? { distinct: res.distinct } : {}) };
  }

  /**
   * The first `size` (name, version) pairs ordered by how many documents (endpoints) have
   * them, ties by pair key; plus the number of distinct pairs. Exact: the index has one shard.
   */
  async pairsByCount(
    query: Query,
    size: number,
    countOrder: SourceOrder,
    keyOrder: SourceOrder,
  ): Promise<{ keys: { key: string; count: number }[]; distinct: number }> {
    const res = await this.aggregate(
      query,
      { pairs: { terms: { field: 'nameVersion', size, order: [{ _count: countOrder }, { _key: keyOrder }] } } },
      true,
    );
    const agg = res.aggs.pairs as estypes.AggregationsStringTermsAggregate | undefined;
    const buckets = (agg?.buckets ?? []) as estypes.AggregationsStringTermsBucket[];
    return { keys: buckets.map((b) => ({ key: String(b.key), count: b.doc_count })), distinct: res.distinct ?? 0 };
  }

}
