/**
 * The organization tree as held in memory (its links: ./org-links.ts, which answers the tree's
 * queries), and the subtree query built from it; ./tree-cache.ts keeps it current.
 */
import type { Query } from '../../store/doc-store.js';
import { pathFieldOf } from '../../store/org-path.js';
import type { OrgMove } from './move-store.js';
import { OrgLinks } from './org-links.js';

export interface Snapshot {
  links: OrgLinks;
  loadedAt: number;
  /** The move whose records are being rewritten, if one is (reads compensate for it). */
  move?: OrgMove;
}

/** A snapshot that knows no organization yet. */
export function emptySnapshot(loadedAt: number): Snapshot {
  return { links: new OrgLinks(), loadedAt };
}

/**
 * The records of the org's subtree: one term on the ancestry. While a move is rewriting records
 * (docs/adr/0087), a subtree the moved organization joined also matches its records by their
 * moved organization's id, and a subtree it left excludes them: one more term, exact whatever
 * the rewrite has reached, since every record below the moved organization holds its id.
 */
export function subtreeQuery(move: OrgMove | undefined, orgId: string, orgField: string): Query {
  const path = pathFieldOf(orgField);
  const base: Query = { term: { [path]: orgId } };
  if (!move) return base;
  const joined = move.to.includes(orgId) && !move.from.includes(orgId);
  const left = move.from.includes(orgId) && !move.to.includes(orgId);
  const moved: Query = { term: { [path]: move.orgId } };
  if (joined) return { bool: { should: [base, moved], minimum_should_match: 1 } };
  if (left) return { bool: { filter: [base], must_not: [moved] } };
  return base;
}
