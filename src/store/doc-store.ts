/**
 * Typed access to one index through its alias. Each resource's store module owns one
 * DocStore and is the only code that touches that index; this class only removes the
 * repetition (error translation, version extraction, hit mapping, paging, PIT scans), and
 * optionally coalesces concurrent reads (`batching`: gets into one multi-get, searches into
 * one multi-search, see batcher.ts).
 */
import type { estypes } from '@elastic/elasticsearch';
import { aliasName, readRetries, type StoreContext } from './client.js';
import { visible } from './visibility.js';
import { storeCall, translateStoreError } from './errors.js';
import { versionOf } from './versions.js';
import { Batcher, type ItemOutcome } from './batcher.js';
import { multiSearch } from './multi-search.js';
import { itemError } from './item-errors.js';
import { pitPages } from './pit.js';
import { PageCounts } from './page-total.js';
import { ConflictError, ServiceUnavailableError, WriteConflictError } from '../errors.js';
import {
  LAST_WRITE_WINS_RETRIES,
  toStored,
  type DocStoreBatching,
  type Hit,
  type Query,
  type SearchBody,
  type SearchResult,
  type Sort,
  type Stored,
  type WriteOptions,
  type Conditional,
} from './doc-types.js';
import { orgOf, orgPathFields, stampBulk, stripPath, withPath, type OrgPathFields } from './org-path.js';
import { carriesWriteIds, landedAs, newWriteId, takeWriteIds, unlessLanded, withWriteId } from './write-token.js';

export { LAST_WRITE_WINS_RETRIES, type DocStoreBatching, type Query, type SearchBody, type SearchResult, type Sort, type Stored, type WriteOptions } from './doc-types.js';

/**
 * Every write names the alias with `require_alias`: a write that reaches the store before the
 * service has set its indices up (or after someone deleted one) must fail, not auto-create an
 * index with dynamic mappings under the alias's name, which would block the set-up for good.
 */
export class DocStore<T extends object> {
  readonly index: string;
  private readonly reads?: Batcher<string, Stored<T> | undefined>;
  private readonly searches?: Batcher<SearchBody, SearchResult<T>>;
  /** Set on org-scoped indices: their records carry the ancestry of their organization (org-path.ts). */
  readonly orgPath?: OrgPathFields;
  /** Which queries' pages count past the bound (page-total.ts). */
  private readonly pages = new PageCounts();
  private readonly writeIds: boolean; // conditional and create-only writes carry their own token (write-token.ts)

  constructor(
    /** Public for the deep reads of src/store/scan.ts (points in time on this index). */
    readonly ctx: StoreContext,
    logicalIndex: string,
    /** Noun used in 404 messages, e.g. "endpoint". */
    private readonly noun: string,
    batching: DocStoreBatching = {},
  ) {
    this.index = aliasName(ctx.prefix, logicalIndex);
    // A store says its own org field; a DocStore made without one (seeding, tools) takes what the context declares for the index.
    this.orgPath = batching.orgField ? orgPathFields(batching.orgField) : ctx.orgScoped?.[logicalIndex];
    this.writeIds = carriesWriteIds(logicalIndex);
    if (batching.reads) this.reads = new Batcher((ids) => this.mgetOutcomes(ids), { name: `coalesced mget ${logicalIndex}`, ...batching.reads });
    if (batching.searches) {
      this.searches = new Batcher((bodies) => this.msearchOutcomes(bodies), { name: `coalesced msearch ${logicalIndex}`, ...batching.searches });
    }
  }

  /** A hit or found document → a stored record, the index-only ancestry removed. */
  fromHit(h: Hit<T>): Stored<T> {
    const s = toStored(h);
    if (this.orgPath) stripPath(s.doc, this.orgPath);
    const ids = this.writeIds ? takeWriteIds(s.doc) : undefined;
    return ids ? { ...s, writeIds: ids } : s;
  }

  /** After a conflict: the document as this write left it when the store holds its token (write-token.ts), else undefined. */
  private writeIdFor = (conditional: boolean): string | undefined => (this.writeIds && conditional ? newWriteId() : undefined);
  private async landed(id: string, writeId: string | undefined): Promise<Stored<T> | undefined> {
    if (writeId === undefined) return undefined;
    return landedAs(await this.get(id), writeId, this.noun);
  }

  private toSearchResult(res: Pick<estypes.SearchResponse<T>, 'hits' | 'aggregations'>): SearchResult<T> {
    const t = res.hits.total;
    const result: SearchResult<T> = { total: typeof t === 'number' ? t : (t?.value ?? 0), items: res.hits.hits.map((h) => this.fromHit(h)), aggregations: res.aggregations };
    if (typeof t === 'object' && t.relation === 'gte') result.totalBounded = true;
    return result;
  }

  /** `doc` with its organization's ancestry when this index is org-scoped and `doc` names an organization. */
  async stamp<D>(doc: D): Promise<D> {
    const f = this.orgPath;
    const org = f && this.ctx.ancestry ? orgOf(doc, f) : undefined;
    if (!f || !this.ctx.ancestry || org === undefined) return doc;
    return withPath(doc, f, await this.ctx.ancestry.pathOf(org));
  }

  /** Bulk operations with the ancestry stamped on every source (index, create) and partial document (update) naming an organization. */
  private stampOperations(ops: estypes.BulkRequest['operations']): Promise<estypes.BulkRequest['operations']> {
    return this.orgPath && this.ctx.ancestry ? stampBulk(ops, this.orgPath, this.ctx.ancestry) : Promise.resolve(ops);
  }

  /** Makes every write to this index acknowledged before the call searchable (see visibility.ts). */
  visible(): Promise<void> {
    return visible(this.ctx, this.index);
  }

  /** Refreshes the index whatever the visibility policy (tooling after a bulk load; never on a request path). */
  async refresh(): Promise<void> {
    await storeCall(() => this.ctx.client.indices.refresh({ index: this.index }));
  }

  private async settle(opts: WriteOptions): Promise<void> {
    if (opts.refresh !== false) await this.visible();
  }

  /**
   * A write made visible as `opts` asks. A write that failed for want of the store (its answer
   * lost on the way back, say) may have landed all the same, so it is made visible too, as best
   * it can be, before its error answers: a caller that retries reads through search what landed
   * (docs/adr/0153-a-failed-write-is-made-visible-before-its-error.md).
   */
  private async settled<R>(write: () => Promise<R>, opts: WriteOptions): Promise<R> {
    let res: R;
    try {
      res = await write();
    } catch (err) {
      if (err instanceof ServiceUnavailableError) await this.settle(opts).catch(() => undefined);
      throw err;
    }
    await this.settle(opts);
    return res;
  }

  private notFound(id: string): string {
    return `${this.noun} ${id} not found`;
  }

  /** One realtime get, deleted ones included; undefined when absent. Batched: concurrent gets travel in one multi-get (realtime too). */
  async get(id: string): Promise<Stored<T> | undefined> {
    if (this.reads) return this.reads.submit(id);
    const res = await storeCall(() =>
      this.ctx.client.get<T>({ index: this.index, id }, { ...readRetries, ignore: [404] }),
    );
    if (!res.found || !res._source) return undefined;
    return this.fromHit(res);
  }

  private async mgetOutcomes(ids: string[]): Promise<ItemOutcome<Stored<T> | undefined>[]> {
    const res = await storeCall(() => this.ctx.client.mget<T>({ index: this.index, ids }, { ...readRetries, ignore: [404] }));
    // A missing index answers 404 as a whole: nothing is found (as a single get with ignore 404).
    if (!Array.isArray(res.docs)) return ids.map(() => ({ ok: true, value: undefined }));
    return res.docs.map((d): ItemOutcome<Stored<T> | undefined> => {
      if ('error' in d) {
        if (d.error.type === 'index_not_found_exception') return { ok: true, value: undefined };
        return { ok: false, error: itemError(500, d.error) };
      }
      if (!d.found || !d._source) return { ok: true, value: undefined };
      return { ok: true, value: this.fromHit(d) };
    });
  }

  private async msearchOutcomes(bodies: SearchBody[]): Promise<ItemOutcome<SearchResult<T>>[]> {
    const res = await storeCall(() =>
      multiSearch<T>(
        this.ctx.client,
        {
          index: this.index,
          // Every search of the batch starts at once (as separate requests would); the default
          // runs them in waves of the search pool size, so the first would wait for the last.
          max_concurrent_searches: bodies.length,
          // The shard request cache also for searches with hits (by default only size 0): the
          // consoles' identical first pages and the inventory's excluded-endpoint lookups are
          // answered from it until the next refresh that changed the shard, which invalidates it,
          // so a search after a write's acknowledgement still sees the write (docs/adr/0008-coalesced-reads-and-request-cache.md).
          searches: bodies.flatMap((b) => [{ request_cache: true }, { seq_no_primary_term: true, version: true, ...b } as estypes.SearchSearchRequestBody]),
        },
        bodies.length,
      ),
    );
    return res.responses.map((r): ItemOutcome<SearchResult<T>> => {
      if ('error' in r) return { ok: false, error: itemError(r.status, r.error) };
      return { ok: true, value: this.toSearchResult(r) };
    });
  }

  /** Multi-get, in the order asked; absent ids are skipped. */
  async getMany(ids: string[]): Promise<Stored<T>[]> {
    if (ids.length === 0) return [];
    const res = await storeCall(() => this.ctx.client.mget<T>({ index: this.index, ids }, readRetries));
    const out: Stored<T>[] = [];
    for (const d of res.docs) {
      if ('found' in d && d.found && d._source) out.push(this.fromHit(d));
    }
    return out;
  }

  /** Create-only write: ConflictError when the id exists. */
  async create(id: string, doc: T, opts: WriteOptions = {}): Promise<Stored<T>> {
    const writeId = this.writeIdFor(true);
    const document = await this.stamp(withWriteId(doc, writeId, undefined));
    const created = async (): Promise<Stored<T>> => {
      try {
        return { id, doc, ...versionOf(await this.ctx.client.create({ index: this.index, require_alias: true, id, document })) };
      } catch (err) {
        const e = translateStoreError(err);
        throw e instanceof ConflictError ? new WriteConflictError(`${this.noun} ${id} already exists`) : e;
      }
    };
    const res = await this.settled(() => unlessLanded(created, (e) => e instanceof WriteConflictError, () => this.landed(id, writeId)), opts);
    return { ...res, doc };
  }

  /** Full write, conditional when `cond` carries seq_no/primary_term. */
  async put(
    id: string,
    doc: T,
    opts: WriteOptions & Partial<Conditional> = {},
  ): Promise<Stored<T>> {
    const { refresh, priorWriteIds, ...cond } = opts;
    const writeId = this.writeIdFor(cond.if_seq_no !== undefined);
    const document = await this.stamp(withWriteId(doc, writeId, priorWriteIds));
    const indexed = async (): Promise<Stored<T>> => ({ id, doc, ...versionOf(await storeCall(() => this.ctx.client.index({ index: this.index, require_alias: true, id, document, ...cond }))) });
    const res = await this.settled(() => unlessLanded(indexed, (e) => e instanceof WriteConflictError, () => this.landed(id, writeId)), { refresh });
    return { ...res, doc };
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
    } & Partial<Conditional> = {},
  ): Promise<Stored<T>> {
    const writeId = this.writeIdFor(opts.if_seq_no !== undefined);
    const doc = await this.stamp(withWriteId(partial as Record<string, unknown>, writeId, opts.priorWriteIds));
    const upsert = opts.upsert === undefined ? undefined : await this.stamp(opts.upsert);
    const write = (): Promise<estypes.UpdateResponse<T>> => storeCall(
      () =>
        this.ctx.client.update<T, Record<string, unknown>, T>({
          index: this.index,
          require_alias: true,
          id,
          doc,
          upsert,
          retry_on_conflict: opts.if_seq_no === undefined ? LAST_WRITE_WINS_RETRIES : undefined,
          if_seq_no: opts.if_seq_no,
          if_primary_term: opts.if_primary_term,
          _source: true,
        }),
      this.notFound(id),
    );
    const res = await this.settled(() => unlessLanded(write, (e) => e instanceof WriteConflictError, () => this.landed(id, writeId)), opts);
    if ('doc' in res) return res; // this write, found landed after its re-send's conflict
    const updated = res.get?._source as T;
    if (this.orgPath) stripPath(updated, this.orgPath);
    if (this.writeIds) takeWriteIds(updated);
    return { id, doc: updated, ...versionOf(res) };
  }

  /** Hard delete (conditional when seq_no/primary_term are given); NotFoundError when absent. */
  async delete(id: string, opts: WriteOptions & Partial<Conditional> = {}): Promise<void> {
    const { refresh, priorWriteIds: _prior, ...cond } = opts;
    await this.settled(
      () => storeCall(() => this.ctx.client.delete({ index: this.index, id, ...cond }), this.notFound(id)),
      { refresh },
    );
  }

  /** A search returning typed hits with their versions. Batched: concurrent ones travel in one multi-search. */
  async search(req: SearchBody): Promise<SearchResult<T>> {
    const plan = this.pages.plan(req);
    if (!plan) return this.searchOnce(req);
    const [page, together] = await Promise.all([this.searchOnce(plan.hits), plan.together ? this.searchOnce(plan.count) : undefined]);
    if (!together && !page.totalBounded) return page;
    const count = (together ?? (await this.searchOnce(plan.count))).total;
    this.pages.counted(req, count);
    const { totalBounded: _bound, ...hits } = page;
    // Never fewer than the page itself saw: the count may run on a copy refreshed a moment apart.
    return { ...hits, total: Math.max(count, (req.from ?? 0) + page.items.length) };
  }

  private async searchOnce(req: SearchBody): Promise<SearchResult<T>> {
    if (this.searches) return this.searches.submit(req);
    const res = await storeCall(() =>
      this.ctx.client.search<T>(
        { index: this.index, seq_no_primary_term: true, version: true, ...req },
        readRetries,
      ),
    );
    return this.toSearchResult(res);
  }

  /** Exact count; where searches are coalesced, a size-0 search in the shared multi-search, not a request of its own. */
  async count(query: Query): Promise<number> {
    if (this.searches) return (await this.searches.submit({ query, size: 0, track_total_hits: true })).total;
    const res = await storeCall(() => this.ctx.client.count({ index: this.index, query }, readRetries));
    return res.count;
  }

  /**
   * Streams every matching document with a point in time and search_after: no 10,000-hit
   * cap, no scroll context left open, memory bounded by `batchSize`. `sort` must end in a
   * unique field (the PIT tiebreaker `_shard_doc` is appended).
   */
  async *scan(query: Query, opts: { batchSize?: number; sort?: Sort; source?: string[] } = {}): AsyncGenerator<Stored<T>[]> {
    const pages = pitPages<T>(this.ctx.client, {
      index: this.index,
      query,
      size: opts.batchSize ?? 1000,
      sort: opts.sort as estypes.SortCombinations[] | undefined,
      // `source`: only these fields of each document (the records are partial then).
      params: { seq_no_primary_term: true, version: true, ...(opts.source ? { _source: opts.source } : {}) },
      requestOptions: readRetries,
      call: storeCall,
    });
    for await (const hits of pages) yield hits.map((h) => this.fromHit(h));
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
    const stamped = await this.stampOperations(operations);
    return this.settled(() => storeCall(() => this.ctx.client.bulk({ index: this.index, require_alias: true, operations: stamped })), opts);
  }
}
