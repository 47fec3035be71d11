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
