/**
 * A page whose total is counted exactly travels as two searches in one multi-search: the hits
 * without counting, and a size-0 count of the same query (docs/adr/0132-pages-count-apart-and-endpoints-sorted-by-id.md).
 * Asked together, Elasticsearch must collect every match to count it, so the sort cannot stop
 * after the page and cannot skip what is not competitive; asked apart, the page stops early (at
 * once on an index sorted like the page) and the count runs alone, over cached filters.
 */
import type { SearchBody } from './doc-types.js';

/** The hits and the count of a page that counts its total exactly; undefined for any other search. */
export function pageAndCount(req: SearchBody): [hits: SearchBody, count: SearchBody] | undefined {
  if (req.track_total_hits !== true || req.size === 0) return undefined;
  // What would make the count differ from the page's own total, or the page more than hits.
  if (req.aggs || req.aggregations || req.post_filter || req.collapse || req.min_score !== undefined || req.terminate_after !== undefined) return undefined;
  return [
    { ...req, track_total_hits: false },
    { query: req.query, size: 0, track_total_hits: true },
  ];
}
