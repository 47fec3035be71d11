/** The API's types by their names in the OpenAPI document, from the generated client types. */
import type { components, operations } from '../../../generated/console-api';

/** A named schema of the OpenAPI document (`components.schemas`): the records, criteria and pages. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

/** The JSON body an operation answers with `status`. */
export type Ok<O extends keyof operations, S extends number = 200> = operations[O]['responses'] extends Record<
  S,
  { content: { 'application/json': infer T } }
>
  ? T
  : never;

/** The JSON request body of an operation. */
export type Body<O extends keyof operations> =
  NonNullable<operations[O]['requestBody']> extends { content: { 'application/json': infer T } } ? T : never;

export type Page<O extends keyof operations> = Ok<O>;

/**
 * Page answers: today's document leaves `totalCount` and `items` optional although the service
 * always sends them; these narrow without `any` (the OpenAPI cleanup will make them required).
 */
export function totalOf(page: { totalCount?: number }): number {
  return page.totalCount ?? 0;
}

export function itemsOf<T>(page: { items?: T[] }): T[] {
  return page.items ?? [];
}
