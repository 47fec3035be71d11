/**
 * PageRequest (its fields are not shown in the spec; designed here) and page results,
 * in one place for every page-search operation.
 */
import Joi from 'joi';
import type { estypes } from '@elastic/elasticsearch';
import { BadRequestError } from '../errors.js';

export interface SortOrder {
  field: string;
  direction: 'ASC' | 'DESC';
}

export interface PageRequest {
  page: number;
  size: number;
  sort?: SortOrder[];
}

export interface Page<T> {
  pageRequest: PageRequest;
  totalCount: number;
  totalPages: number;
  items: T[];
}

/** Elasticsearch's default index.max_result_window: from + size may not exceed it. */
export const RESULT_WINDOW = 10_000;
export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 20;

/** PageRequest schema; `sortable` lists the API field names a caller may sort by. */
export function pageRequestSchema(sortable: readonly string[]): Joi.ObjectSchema<PageRequest> {
  return Joi.object<PageRequest>({
    page: Joi.number().integer().min(0).default(0),
    size: Joi.number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
    sort: Joi.array()
      .max(5)
      .items(
        Joi.object({
          field: Joi.string()
            .valid(...sortable)
            .required(),
          direction: Joi.string().uppercase().valid('ASC', 'DESC').default('ASC'),
        }),
      ),
  })
    .default()
    .label('PageRequest');
}

/** `{criteria, pageRequest}`: the shape of every Paged...Criteria type. */
export function pagedCriteriaSchema(
  criteria: Joi.ObjectSchema,
  sortable: readonly string[],
  label: string,
): Joi.ObjectSchema {
  return Joi.object({
    criteria: criteria.default(),
    pageRequest: pageRequestSchema(sortable),
  })
    .default()
    .label(label);
}

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

export function toPage<T>(pr: PageRequest, totalCount: number, items: T[]): Page<T> {
  return { pageRequest: pr, totalCount, totalPages: Math.ceil(totalCount / pr.size), items };
}

/** Schema of a page result whose items follow `item` (`toPage` always answers every field but `sort`). */
export function pageSchema(item: Joi.Schema, label: string): Joi.ObjectSchema {
  return Joi.object({
    pageRequest: Joi.object({
      page: Joi.number().integer().required(),
      size: Joi.number().integer().required(),
      sort: Joi.array().items(
        Joi.object({ field: Joi.string().required(), direction: Joi.string().valid('ASC', 'DESC').required() }),
      ),
    }).required(),
    totalCount: Joi.number().integer().min(0).required(),
    totalPages: Joi.number().integer().min(0).required(),
    items: Joi.array().items(item).required(),
  }).label(label);
}
