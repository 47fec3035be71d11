/**
 * Domain types every layer may use (like src/errors.ts): the HTTP layer presents them, the
 * resources and stores keep them. Nothing here imports src/http or src/store.
 */

/** Who wrote a record (spec UserKey). */
export interface UserKey {
  username: string;
  authenticator: string;
}

/** One sort key of a PageRequest. */
export interface SortOrder {
  field: string;
  direction: 'ASC' | 'DESC';
}

/** PageRequest (its fields are not shown in the spec; designed here). */
export interface PageRequest {
  page: number;
  size: number;
  sort?: SortOrder[];
}

/**
 * How deep a page may reach (from + size), Elasticsearch's default index.max_result_window:
 * the page searches refuse beyond it and point to cursors, which go past it.
 */
export const RESULT_WINDOW = 10_000;

/** One page of a page search (its fields are the spec's Page...). */
export interface Page<T> {
  pageRequest: PageRequest;
  totalCount: number;
  totalPages: number;
  items: T[];
}

export function toPage<T>(pr: PageRequest, totalCount: number, items: T[]): Page<T> {
  return { pageRequest: pr, totalCount, totalPages: Math.ceil(totalCount / pr.size), items };
}

/**
 * The most buckets an aggregation answers; beyond it the criteria are too broad (400): the
 * answer would otherwise grow with the data (API4).
 */
export const MAX_AGGREGATION_BUCKETS = 10_000;

/** A name-based UUID (version 5 layout) from a hex digest. */
export function uuidFrom(hex: string): string {
  const h = hex.slice(0, 32).split('');
  h[12] = '5';
  h[16] = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}
