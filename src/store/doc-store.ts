/**
 * Typed access to one index through its alias. Each resource's store module owns one
 * DocStore and is the only code that touches that index; this class only removes the
 * repetition (error translation, version extraction, hit mapping, paging, PIT scans).
 */
import type { estypes } from '@elastic/elasticsearch';
import { aliasName, readRetries, type StoreContext } from './client.js';
import { visible } from './visibility.js';
import { storeCall, translateStoreError } from './errors.js';
import type { DocVersion } from './versions.js';
import { ConflictError, NotFoundError, WriteConflictError } from '../errors.js';

export interface Stored<T> extends DocVersion {
  id: string;
  doc: T;
}

export interface SearchResult<T> {
  total: number;
  items: Stored<T>[];
  aggregations?: Record<string, estypes.AggregationsAggregate>;
}

export interface WriteOptions {
  /**
   * `false`: answer as soon as the write is acknowledged, without waiting for visibility — for
   * hot-path bookkeeping nobody reads through search, or for one of several writes of a request
   * whose caller then awaits `visible()` once. Unset: searchable by any client before the call
   * returns (the store's shared refresh, see visibility.ts).
   */
  refresh?: false;
}

export type Query = estypes.QueryDslQueryContainer;
export type Sort = estypes.Sort;

function versionOf(r: { _seq_no?: number; _primary_term?: number; _version?: number }): DocVersion {
  return { seqNo: r._seq_no ?? -1, primaryTerm: r._primary_term ?? 0, version: r._version ?? 0 };
}

/**
 * Elasticsearch's own retries of an unconditional partial update that met a concurrent
 * write (it re-reads on the shard): enough for a burst of writers on one document.
 */
export const LAST_WRITE_WINS_RETRIES = 10;

/**
 * Every write names the alias with `require_alias`: a write that reaches the store before the
 * service has set its indices up (or after someone deleted one) must fail, not auto-create an
 * index with dynamic mappings under the alias's name, which would block the set-up for good.
 */
export class DocStore<T extends object> {
  readonly index: string;
  constructor(
    /** Public for the deep reads of src/store/scan.ts (points in time on this index). */
    readonly ctx: StoreContext,
    logicalIndex: string,
    /** Noun used in 404 messages, e.g. "endpoint". */
    private readonly noun: string,
  ) {
    this.index = aliasName(ctx.prefix, logicalIndex);
  }

  /** Makes every write to this index acknowledged before the call searchable (see visibility.ts). */
  visible(): Promise<void> {
    return visible(this.ctx, this.index);
  }

  private async settle(opts: WriteOptions): Promise<void> {
    if (opts.refresh !== false) await this.visible();
  }

  private notFound(id: string): string {
    return `${this.noun} ${id} not found`;
  }

  /** One realtime get; undefined when absent. */
  async get(id: string): Promise<Stored<T> | undefined> {
    const res = await storeCall(() =>
      this.ctx.client.get<T>({ index: this.index, id }, { ...readRetries, ignore: [404] }),
    );
    if (!res.found || !res._source) return undefined;
    return { id: res._id, doc: res._source, ...versionOf(res) };
  }

  /** One realtime get; NotFoundError when absent. */
  async getOrThrow(id: string): Promise<Stored<T>> {
    const hit = await this.get(id);
    if (!hit) throw new NotFoundError(this.notFound(id));
    return hit;
  }

  /** Multi-get, in the order asked; absent ids are skipped. */
  async getMany(ids: string[]): Promise<Stored<T>[]> {
    if (ids.length === 0) return [];
    const res = await storeCall(() => this.ctx.client.mget<T>({ index: this.index, ids }, readRetries));
    const out: Stored<T>[] = [];
    for (const d of res.docs) {
      if ('found' in d && d.found && d._source) out.push({ id: d._id, doc: d._source, ...versionOf(d) });
    }
    return out;
  }

  /** Create-only write: ConflictError when the id exists. */
  async create(id: string, doc: T, opts: WriteOptions = {}): Promise<Stored<T>> {
    try {
      const res = await this.ctx.client.create({
        index: this.index,
        require_alias: true,
        id,
        document: doc,
      });
      await this.settle(opts);
      return { id, doc, ...versionOf(res) };
    } catch (err) {
      const e = translateStoreError(err);
      if (e instanceof ConflictError) throw new WriteConflictError(`${this.noun} ${id} already exists`);
      throw e;
    }
  }

  /** Full write, conditional when `cond` carries seq_no/primary_term. */
  async put(
    id: string,
    doc: T,
    opts: WriteOptions & { if_seq_no?: number; if_primary_term?: number } = {},
  ): Promise<Stored<T>> {
    const { refresh, ...cond } = opts;
    const res = await storeCall(() =>
      this.ctx.client.index({ index: this.index, require_alias: true, id, document: doc, ...cond }),
    );
    await this.settle({ refresh });
    return { id, doc, ...versionOf(res) };
  }

  /**
   * One partial update (no read in Node). Returns the updated document.
   * NotFoundError when the document does not exist and no upsert is given.
   */
  async patch(
    id: string,
    partial: Partial<T> | Record<string, unknown>,
    opts: WriteOptions & {
      upsert?: T;
      if_seq_no?: number;
      if_primary_term?: number;
    } = {},
  ): Promise<Stored<T>> {
    const res = await storeCall(
      () =>
        this.ctx.client.update<T, Record<string, unknown>, T>({
          index: this.index,
          require_alias: true,
          id,
          doc: partial as Record<string, unknown>,
          upsert: opts.upsert,
          retry_on_conflict: opts.if_seq_no === undefined ? LAST_WRITE_WINS_RETRIES : undefined,
          if_seq_no: opts.if_seq_no,
          if_primary_term: opts.if_primary_term,
          _source: true,
        }),
      this.notFound(id),
    );
    await this.settle(opts);
    return { id, doc: res.get?._source as T, ...versionOf(res) };
  }

  /** Hard delete (conditional when seq_no/primary_term are given); NotFoundError when absent. */
  async delete(id: string, opts: WriteOptions & { if_seq_no?: number; if_primary_term?: number } = {}): Promise<void> {
    const { refresh, ...cond } = opts;
    await storeCall(
      () => this.ctx.client.delete({ index: this.index, id, ...cond }),
      this.notFound(id),
    );
    await this.settle({ refresh });
  }

  /** A search returning typed hits with their versions. */
  async search(req: Omit<estypes.SearchRequest, 'index'>): Promise<SearchResult<T>> {
    const res = await storeCall(() =>
      this.ctx.client.search<T>(
        { index: this.index, seq_no_primary_term: true, version: true, ...req },
        readRetries,
      ),
    );
    const total = typeof res.hits.total === 'number' ? res.hits.total : (res.hits.total?.value ?? 0);
    return {
      total,
      items: res.hits.hits.map((h) => ({ id: h._id as string, doc: h._source as T, ...versionOf(h) })),
      aggregations: res.aggregations,
    };
  }

  /** Exact count of documents matching a query. */
  async count(query: Query): Promise<number> {
    const res = await storeCall(() => this.ctx.client.count({ index: this.index, query }, readRetries));
    return res.count;
  }

  /**
   * Streams every matching document with a point in time and search_after: no 10,000-hit
   * cap, no scroll context left open, memory bounded by `batchSize`. `sort` must end in a
   * unique field (the PIT tiebreaker `_shard_doc` is appended).
   */
  async *scan(query: Query, opts: { batchSize?: number; sort?: Sort } = {}): AsyncGenerator<Stored<T>[]> {
    const pit = await storeCall(() =>
      this.ctx.client.openPointInTime({ index: this.index, keep_alive: '2m' }, readRetries),
    );
    let pitId = pit.id;
    try {
      let after: estypes.SortResults | undefined;
      for (;;) {
        const res = await storeCall(() =>
          this.ctx.client.search<T>(
            {
              pit: { id: pitId, keep_alive: '2m' },
              query,
              size: opts.batchSize ?? 1000,
              sort: [...((opts.sort as estypes.SortCombinations[] | undefined) ?? []), { _shard_doc: 'asc' }],
              search_after: after,
              seq_no_primary_term: true,
              version: true,
              track_total_hits: false,
            },
            readRetries,
          ),
        );
        pitId = res.pit_id ?? pitId;
        const hits = res.hits.hits;
        if (hits.length === 0) return;
        yield hits.map((h) => ({ id: h._id as string, doc: h._source as T, ...versionOf(h) }));
        after = hits[hits.length - 1].sort;
        if (hits.length < (opts.batchSize ?? 1000)) return;
      }
    } finally {
      await this.ctx.client.closePointInTime({ id: pitId }).catch(() => undefined);
    }
  }

  /** Collects a scan into one array (for bounded result sets such as "all of one org"). */
  async all(query: Query, opts: { sort?: Sort; limit?: number } = {}): Promise<Stored<T>[]> {
    const out: Stored<T>[] = [];
    for await (const batch of this.scan(query, { sort: opts.sort })) {
      out.push(...batch);
      if (opts.limit !== undefined && out.length >= opts.limit) return out.slice(0, opts.limit);
    }
    return out;
  }

  /**
   * Bulk operations in one request; returns the per-item results. Unless `refresh: false`, the
   * items that succeeded are searchable when it returns.
   */
  async bulk(
    operations: estypes.BulkRequest['operations'],
    opts: WriteOptions = {},
  ): Promise<estypes.BulkResponse> {
    const res = await storeCall(() => this.ctx.client.bulk({ index: this.index, require_alias: true, operations }));
    await this.settle(opts);
    return res;
  }
}
