/** The point-in-time scan: pages of a search with search_after, no 10,000-hit cap, no scroll left open. */
import type { Client, estypes, TransportRequestOptions } from '@elastic/elasticsearch';

export interface PitScanOptions {
  index: string;
  query: estypes.QueryDslQueryContainer;
  /** Hits per page (memory is bounded by it). */
  size: number;
  /** Sort before the PIT tiebreaker `_shard_doc` (appended); must end in a unique field when given. */
  sort?: estypes.SortCombinations[];
  /** Extra search parameters (versions, _source). */
  params?: Partial<estypes.SearchRequest>;
  /** Transport options of every call (retries). */
  requestOptions?: TransportRequestOptions;
  /** Wraps every call (the stores' error translation). */
  call?: <R>(fn: () => Promise<R>) => Promise<R>;
}

/** Yields the pages of a point-in-time search of `index`; the PIT is closed however the loop ends. */
export async function* pitPages<T>(client: Client, opts: PitScanOptions): AsyncGenerator<estypes.SearchHit<T>[]> {
  const call = opts.call ?? (<R>(fn: () => Promise<R>) => fn());
  const pit = await call(() => client.openPointInTime({ index: opts.index, keep_alive: '2m' }, opts.requestOptions));
  let pitId = pit.id;
  try {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const res = await call(() =>
        client.search<T>(
          {
            ...opts.params,
            pit: { id: pitId, keep_alive: '2m' },
            query: opts.query,
            size: opts.size,
            sort: [...(opts.sort ?? []), { _shard_doc: 'asc' }],
            search_after: after,
            track_total_hits: false,
          },
          opts.requestOptions,
        ),
      );
      pitId = res.pit_id ?? pitId;
      const hits = res.hits.hits;
      if (hits.length > 0) yield hits;
      if (hits.length < opts.size) return;
      after = hits[hits.length - 1].sort;
    }
  } finally {
    await client.closePointInTime({ id: pitId }).catch(() => undefined);
  }
}
