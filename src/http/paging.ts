/**
 * PageRequest schemas and page results, in one place for every page-search operation
 * (the Elasticsearch side of a page: src/store/page-query.ts).
 */
import Joi from 'joi';
import type { PageRequest } from '../domain.js';

export { toPage, type Page } from '../domain.js';

export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 20;

/**
 * PageRequest schema; `sortable` lists the API field names a caller may sort by. `item` names
 * the request form in the OpenAPI document (`<item>PageRequest`, its sort keys `<item>SortOrder`):
 * each page search has its own sortable fields.
 */
export function pageRequestSchema(sortable: readonly string[], item: string): Joi.ObjectSchema<PageRequest> {
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
        }).meta({ className: `${item}SortOrder` }),
      ),
  })
    .default()
    .label('PageRequest')
    .meta({ className: `${item}PageRequest` });
}

/**
 * `{criteria, pageRequest}`: the shape of every Paged...Criteria type, named `label` (the spec's
 * name); its page request is named after the label's item (`PagedUtmEndpointCriteria` → `UtmEndpointPageRequest`).
 */
export function pagedCriteriaSchema(
  criteria: Joi.ObjectSchema,
  sortable: readonly string[],
  label: string,
): Joi.ObjectSchema {
  const item = label.replace(/^Paged?/, '').replace(/(Search)?Criteria$/, '');
  return Joi.object({
    criteria: criteria.default(),
    pageRequest: pageRequestSchema(sortable, item),
  })
    .default()
    .label(label)
    .meta({ className: label })
    .example({
      criteria: {},
      pageRequest: {
        page: 0,
        size: DEFAULT_PAGE_SIZE,
        ...(sortable.length ? { sort: [{ field: sortable[0], direction: 'ASC' }] } : {}),
      },
    });
}

/** The page request a page result echoes: the request's page and size, and its sort keys when given. */
const pageRequestEcho = Joi.object({
  page: Joi.number().integer().required(),
  size: Joi.number().integer().required(),
  sort: Joi.array().items(
    Joi.object({ field: Joi.string().required(), direction: Joi.string().valid('ASC', 'DESC').required() }).meta({
      className: 'SortOrder',
    }),
  ),
}).meta({ className: 'PageRequest' });

/**
 * Schema of a page result whose items follow `item` (`toPage` always answers every field but
 * `sort`), named `name` in the OpenAPI document: `<Item>Page`.
 */
export function pageSchema(item: Joi.Schema, name: string): Joi.ObjectSchema {
  // A page of the item's example, when the item has one (docs/api.md's examples are the document's).
  const example = (item.describe() as { examples?: unknown[] }).examples?.[0];
  const page = Joi.object({
    pageRequest: pageRequestEcho.required(),
    totalCount: Joi.number().integer().min(0).required(),
    totalPages: Joi.number().integer().min(0).required(),
    items: Joi.array().items(item).required(),
  })
    .label(name)
    .meta({ className: name });
  return example === undefined
    ? page
    : page.example({
        pageRequest: { page: 0, size: DEFAULT_PAGE_SIZE },
        totalCount: 1,
        totalPages: 1,
        items: [example],
      });
}
