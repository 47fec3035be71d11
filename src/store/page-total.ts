/**
 * A page whose total is counted exactly counts along with its hits up to a bound, and apart only
 * past it (docs/adr/0134-pages-count-with-their-hits-up-to-a-bound.md). Below the bound the one
 * search answers the exact total: one round trip. At the bound the search has stopped counting —
 * on an index sorted like the page it stops collecting too — and a size-0 count of the same
 * query, alone and over cached filters, gives the total. A query seen past the bound asks its
 * next pages' hits (uncounted) and count together, in one multi-search, as a subtree of hundreds
 * of thousands of records does page after page.
 */
import { RecentMap } from '../recent-map.js';
import type { SearchBody } from './doc-types.js';

/** Matches a page counts along with its hits; more are counted apart. Elasticsearch's own default bound. */
export const COUNTED_WITH_HITS = 10_000;

/** Queries remembered as matching past the bound, per index. */
const LARGE_REMEMBERED = 1_000;

/**
 * What a page may ask besides its query for its total to be the query's count: keys that shape
 * or place the hits. Anything else (aggregations, a post filter, collapse, runtime fields, a
 * point in time, a retriever…) keeps the search as it is.
 */
const HIT_SHAPING = new Set([
  'query', 'from', 'size', 'sort', 'search_after', '_source', 'fields', 'docvalue_fields', 'stored_fields',
  'highlight', 'seq_no_primary_term', 'version', 'track_total_hits', 'timeout',
]);

/** How a page is asked: `together`, its uncounted hits and its count at once; else its hits counting to the bound, the count after only past it. */
export interface PagePlan {
  together: boolean;
  hits: SearchBody;
  count: SearchBody;
}

/** The bounded page and its count; undefined for a search that is not a page counting exactly. */
export function boundedPage(req: SearchBody): { page: SearchBody; count: SearchBody } | undefined {
  if (req.track_total_hits !== true || req.size === 0) return undefined;
  for (const key of Object.keys(req)) if (!HIT_SHAPING.has(key)) return undefined;
  return {
    page: { ...req, track_total_hits: COUNTED_WITH_HITS },
    count: { query: req.query, size: 0, track_total_hits: true, ...(req.timeout === undefined ? {} : { timeout: req.timeout }) },
  };
}

/** One index's pages: which queries were last counted past the bound. */
export class PageCounts {
  private readonly large = new RecentMap<string, true>(LARGE_REMEMBERED);

  plan(req: SearchBody): PagePlan | undefined {
    const bounded = boundedPage(req);
    if (!bounded) return undefined;
    // No query past the bound yet (the common case): no key to make on the search's hot path.
    if (this.large.size === 0 || !this.large.has(keyOf(req))) return { together: false, hits: bounded.page, count: bounded.count };
    return { together: true, hits: { ...req, track_total_hits: false }, count: bounded.count };
  }

  /** The exact count of the page's query: remembered when past the bound, forgotten when below. */
  counted(req: SearchBody, total: number): void {
    if (total >= COUNTED_WITH_HITS) this.large.set(keyOf(req), true);
    else if (this.large.size > 0) this.large.delete(keyOf(req));
  }
}

/** A query as the memory of large totals knows it. */
function keyOf(req: SearchBody): string {
  return JSON.stringify(req.query ?? null);
}
