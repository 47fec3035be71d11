/** A PageRequest in Elasticsearch's terms: from/size/sort, one place for every page search. */
import type { estypes } from '@elastic/elasticsearch';
import { BadRequestError } from '../errors.js';
import { RESULT_WINDOW, type PageRequest, type SortOrder } from '../domain.js';

export { RESULT_WINDOW };

export interface PageQuery {
  from: number;
  size: number;
  sort: estypes.SortCombinations[];
  track_total_hits: true;
}

/**
 * Turns a PageRequest into from/size/sort. `sortFields` maps API names to indexed fields;
 * the record id always ends the sort so pages are stable. A page beyond Elasticsearch's
 * result window is refused with a 400 that says how to narrow it.
 */
export function pageQuery(
  pr: PageRequest,
  sortFields: Readonly<Record<string, string>>,
  defaultSort: SortOrder[] = [],
): PageQuery {
  const from = pr.page * pr.size;
  if (from + pr.size > RESULT_WINDOW) {
    throw new BadRequestError(
      `pageRequest reaches result ${from + pr.size}, beyond the ${RESULT_WINDOW}-result window; narrow the criteria or sort to reach later records`,
    );
  }
  const orders = pr.sort && pr.sort.length > 0 ? pr.sort : defaultSort;
  const sort: estypes.SortCombinations[] = orders.map((o) => {
    const field = sortFields[o.field];
    if (!field) throw new BadRequestError(`pageRequest.sort: ${o.field} is not sortable`);
    return { [field]: { order: o.direction === 'DESC' ? 'desc' : 'asc', missing: '_last' } };
  });
  sort.push({ id: { order: 'asc' } });
  return { from, size: pr.size, sort, track_total_hits: true };
}
