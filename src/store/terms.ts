/**
 * A match on any of a list of values, however long the list: Elasticsearch refuses a `terms`
 * query of more values than `index.max_terms_count` (65,536 by default), so a longer list is
 * split into clauses of at most `TERMS_PER_CLAUSE` values, any of which matches.
 */
import type { Query } from './doc-store.js';

/** Values per `terms` clause, below Elasticsearch's index.max_terms_count. */
export const TERMS_PER_CLAUSE = 50_000;

/** `field` is any of `values` (no value: nothing matches). */
export function anyOf(field: string, values: readonly string[], perClause: number = TERMS_PER_CLAUSE): Query {
  if (values.length <= perClause) return { terms: { [field]: [...values] } };
  const should: Query[] = [];
  for (let i = 0; i < values.length; i += perClause) should.push({ terms: { [field]: values.slice(i, i + perClause) } });
  return { bool: { should, minimum_should_match: 1 } };
}
