/**
 * Deep reads of one index on a point in time (PIT) with search_after: the store side of cursors
 * and exports. A `PitSearch` is one prepared search — its query (with the caller's
 * organization filter already in it), its sort (ending in the unique `id` keyword) and the
 * mapping from hit to record — that reads one page at a time from a position. The position is
 * plain data (PIT id and the last hit's sort values), so the HTTP layer can carry it in a cursor
 * and come back to it on another request or another instance.
 *
 * `CompositeSearch` is the same contract over a composite aggregation (pages of buckets, the
 * position is the aggregation's after-key), for page searches whose items are buckets.
 */
import { errors, type estypes } from '@elastic/elasticsearch';
import { readRetries } from './client.js';
import { storeCall } from './errors.js';
import type { DocStore, Query, Stored } from './doc-store.js';
import { BadRequestError } from '../errors.js';

/** Where a deep read stands: the point in time it reads and the sort values of its last hit. */
export interface ScanPosition {
  pit?: string;
  after?: unknown;
}

export interface ScanPage<R> {
  /** Exact total of the search (only when asked for). */
  total?: number;
  items: R[];
  /** The position after the last item (pass it back for the next page). */
  next: ScanPosition;
}

export interface ScanOptions {
  /** How long Elasticsearch keeps the point in time alive after this page. */
  keepAliveSeconds: number;
  /** Hits to skip (first page only: a cursor may start at any page inside the result window). */
  from?: number;
  /** Count the total (the first page of a cursor; later pages carry it). */
  trackTotal?: boolean;
}

/** A cursor whose point in time is gone (expired, closed, or its node restarted). */
export class CursorExpiredError extends BadRequestError {
  constructor(keepAliveSeconds: number) {
    super(
      `cursor expired: its point in time is no longer open (kept ${keepAliveSeconds} s after each page); ` +
        'start the search again without a cursor',
    );
  }
}

/** True for Elasticsearch's answer to a search on a point in time it no longer holds. */
function isMissingContext(err: unknown): boolean {
  if (!(err instanceof errors.ResponseError)) return false;
  const body = err.meta?.body as { error?: { type?: string; root_cause?: { type?: string }[] } } | undefined;
  const types = [body?.error?.type, ...(body?.error?.root_cause ?? []).map((c) => c.type)];
  return types.includes('search_context_missing_exception');
}

/** One prepared hit search, read page by page on a point in time. */
export class PitSearch<T extends object, R> {
  /** Pages read one frozen point in time: the first page's total bounds them exactly. */
  readonly frozen = true;
  constructor(
    private readonly docs: DocStore<T>,
    private readonly query: Query,
    /** Must end in a unique field (`id`): search_after needs a total order. */
    private readonly sort: estypes.SortCombinations[],
    private readonly toRecord: (hit: Stored<T>) => R,
  ) {}

  /** One page from `pos` (undefined: open a point in time and read the first page). */
  async page(pos: ScanPosition | undefined, size: number, opts: ScanOptions): Promise<ScanPage<R>> {
    const keepAlive = `${opts.keepAliveSeconds}s`;
    const client = this.docs.ctx.client;
    let pit = pos?.pit;
    if (pit === undefined) {
      const opened = await storeCall(() =>
        client.openPointInTime({ index: this.docs.index, keep_alive: keepAlive }, readRetries),
      );
      pit = opened.id;
    }
    const pitId = pit;
    try {
      const res = await storeCall(async () => {
        try {
          return await client.search<T>(
            {
              pit: { id: pitId, keep_alive: keepAlive },
              query: this.query,
              size,
              sort: this.sort,
              ...(pos?.after !== undefined
                ? { search_after: pos.after as estypes.SortResults }
                : { from: opts.from ?? 0 }),
              track_total_hits: opts.trackTotal === true,
              seq_no_primary_term: true,
              version: true,
            },
            readRetries,
          );
        } catch (err) {
          if (isMissingContext(err)) throw new CursorExpiredError(opts.keepAliveSeconds);
          throw err;
        }
      });
      const hits = res.hits.hits;
      const total = typeof res.hits.total === 'number' ? res.hits.total : res.hits.total?.value;
      return {
        total: opts.trackTotal === true ? total : undefined,
        items: hits.map((h) => this.toRecord(this.docs.fromHit(h))),
        next: { pit: res.pit_id ?? pitId, after: hits.length > 0 ? hits[hits.length - 1].sort : pos?.after },
      };
    } catch (err) {
      // A point in time this call opened and cannot hand back is closed at once.
      if (pos?.pit === undefined) await this.close({ pit: pitId });
      throw err;
    }
  }

  /** Frees the point in time (best effort: it expires on its own anyway). */
  async close(pos: ScanPosition): Promise<void> {
    if (pos.pit === undefined) return;
    await this.docs.ctx.client.closePointInTime({ id: pos.pit }).catch(() => undefined);
  }
}

/** A page of composite-aggregation buckets after `after` (undefined: the first). */
export type CompositeReader<R> = (
  after: Record<string, estypes.FieldValue> | undefined,
  size: number,
  withTotal: boolean,
) => Promise<{ items: R[]; after?: Record<string, estypes.FieldValue>; total?: number }>;

/**
 * The deep-read contract over a composite aggregation: no point in time (the bucket keys are
 * a total order of their own, so pages neither repeat nor skip a key that exists throughout),
 * the position is the after-key.
 */
export class CompositeSearch<R> {
  /** The buckets are read live (no point in time): the total is not a bound. */
  readonly frozen = false;
  constructor(private readonly read: CompositeReader<R>) {}

  async page(pos: ScanPosition | undefined, size: number, opts: ScanOptions): Promise<ScanPage<R>> {
    const skip = pos?.after === undefined ? (opts.from ?? 0) : 0;
    let after = pos?.after as Record<string, estypes.FieldValue> | undefined;
    let total: number | undefined;
    // A first page that starts at page p walks the keys before it (as the spec's paging does).
    for (let skipped = 0; skipped < skip;) {
      const res = await this.read(
        after,
        Math.min(skip - skipped, 1000),
        opts.trackTotal === true && total === undefined,
      );
      total ??= res.total;
      skipped += res.items.length;
      if (!res.after || res.items.length === 0) return { total, items: [], next: { after } };
      after = res.after;
    }
    const res = await this.read(after, size, opts.trackTotal === true && total === undefined);
    return {
      total: opts.trackTotal === true ? (total ?? res.total) : undefined,
      items: res.items,
      next: { after: res.after ?? after },
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
