/** The records, queries and options a DocStore (./doc-store.ts) reads and writes. */
import type { estypes } from '@elastic/elasticsearch';
import type { BatcherOptions } from './batcher.js';
import { versionOf, type DocVersion } from './versions.js';

export { conditionOn, type Conditional } from './versions.js';

export interface Stored<T> extends DocVersion {
  id: string;
  doc: T;
  /** The ids of the last writes that carried one (write-token.ts): a conditional write on this read carries them on. */
  writeIds?: string[];
}

export interface SearchResult<T> {
  total: number;
  /** The search stopped counting at its `track_total_hits` bound: `total` is that bound, not the count. */
  totalBounded?: true;
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

export type SearchBody = Omit<estypes.SearchRequest, 'index'>;

/** Coalescing of concurrent reads (see batcher.ts); unset: every call is its own request. */
export interface DocStoreBatching {
  /**
   * Set by the stores of org-scoped indices: where their records keep their organization
   * (`orgId`, or a dotted path); their records then carry its ancestry (org-path.ts).
   */
  orgField?: string;
  /** Realtime gets → one multi-get. */
  reads?: BatcherOptions;
  /** Searches → one multi-search. */
  searches?: BatcherOptions;
}

/** A search hit or a found get/mget document → a stored record with its version. */
export type Hit<T> = { _id?: string | null; _source?: T; _seq_no?: number; _primary_term?: number; _version?: number };

export function toStored<T>(h: Hit<T>): Stored<T> {
  return { id: h._id as string, doc: h._source as T, ...versionOf(h) };
}

/**
 * Elasticsearch's own retries of an unconditional partial update that met a concurrent
 * write (it re-reads on the shard): enough for a burst of writers on one document.
 */
export const LAST_WRITE_WINS_RETRIES = 10;
