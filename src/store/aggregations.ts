/** Aggregation plumbing shared by the stores: term-count buckets and composite paging. */
import type { estypes } from '@elastic/elasticsearch';

/** One value of a field and how many documents have it. */
export interface TermCount {
  key: string;
  count: number;
}

/** Count descending, then key ascending (so equal counts read alphabetically). */
export function byCountThenKey(a: TermCount, b: TermCount): number {
  return b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

export type AfterKey = Record<string, estypes.FieldValue>;

/** One round trip of a composite aggregation: its buckets and where the next one starts. */
export interface CompositeChunk<B> {
  buckets: B[];
  after?: AfterKey;
}

/**
 * Walks a composite aggregation to its end: `fetch` asks for up to `chunk` buckets after
 * `after`; every bucket is collected. `tooMany` (thrown) stops the walk as soon as more than
 * `max` buckets were read, before the rest is asked for.
 */
export async function compositeAll<B>(
  fetch: (after: AfterKey | undefined, chunk: number) => Promise<CompositeChunk<B>>,
  opts: { chunk: number; max: number; tooMany: () => Error },
): Promise<B[]> {
  const out: B[] = [];
  let after: AfterKey | undefined;
  for (;;) {
    const res = await fetch(after, opts.chunk);
    out.push(...res.buckets);
    if (out.length > opts.max) throw opts.tooMany();
    if (res.buckets.length < opts.chunk || !res.after) return out;
    after = res.after;
  }
}

/** Reads a composite aggregation's buckets and after_key from a response. */
export function compositeChunk(agg: estypes.AggregationsAggregate | undefined): { buckets: estypes.AggregationsCompositeBucket[]; after?: AfterKey } {
  const composite = agg as estypes.AggregationsCompositeAggregate | undefined;
  return { buckets: (composite?.buckets ?? []) as estypes.AggregationsCompositeBucket[], after: composite?.after_key };
}
