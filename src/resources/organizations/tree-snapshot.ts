/** The organization tree as held in memory, and the queries answered from it (./tree-cache.ts keeps it current). */
import type { Query } from '../../store/doc-store.js';
import { pathFieldOf } from '../../store/org-path.js';
import type { OrgMove } from './move-store.js';

export interface Snapshot {
  parent: Map<string, string | undefined>;
  children: Map<string, Set<string>>;
  loadedAt: number;
  /** The move whose records are being rewritten, if one is (reads compensate for it). */
  move?: OrgMove;
}

/** Sets `id`'s parent in the snapshot (adding or moving it); idempotent. */
export function link(s: Snapshot, id: string, parentId: string | undefined): void {
  const had = s.parent.has(id);
  const old = s.parent.get(id);
  if (had && old === parentId) return;
  if (old !== undefined) s.children.get(old)?.delete(id);
  s.parent.set(id, parentId);
  if (parentId === undefined) return;
  let set = s.children.get(parentId);
  if (!set) s.children.set(parentId, (set = new Set()));
  set.add(id);
}

/** Removes `id` from the snapshot (its children keep their parent link). */
export function unlink(s: Snapshot, id: string): void {
  if (!s.parent.has(id)) return;
  const old = s.parent.get(id);
  if (old !== undefined) s.children.get(old)?.delete(id);
  s.parent.delete(id);
}

/** True when `orgId` is `rootId` or below it. */
export function isWithin(s: Snapshot, orgId: string, rootId: string): boolean {
  let cur: string | undefined = orgId;
  for (let depth = 0; cur !== undefined && depth < 10_000; depth++) {
    if (cur === rootId) return true;
    if (!s.parent.has(cur)) return false;
    cur = s.parent.get(cur);
  }
  return false;
}

/** Every organization strictly below the org. */
export function descendants(s: Snapshot, orgId: string): string[] {
  const out: string[] = [];
  const queue = [...(s.children.get(orgId) ?? [])];
  for (let k = 0; k < queue.length; k++) {
    const id = queue[k] as string;
    out.push(id);
    for (const c of s.children.get(id) ?? []) queue.push(c);
  }
  return out;
}

/** Ids from the org's root down to the org (an org the tree does not know: itself alone). */
export function pathOf(s: Snapshot, orgId: string): string[] {
  const path: string[] = [];
  let cur: string | undefined = orgId;
  while (cur !== undefined && path.length < 10_000) {
    path.push(cur);
    cur = s.parent.get(cur);
  }
  return path.reverse();
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
