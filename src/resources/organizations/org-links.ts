/**
 * The organization tree's parent and child links, held compactly: each organization id is
 * numbered once, and the links are numbers in typed arrays (a parent, and the children as a list
 * threaded through first/last child and next/previous sibling). A service that holds 100,000
 * organizations keeps one table from id to number and a few flat arrays, instead of a map of
 * parents, a map of child sets and a set per parent, and it keeps each id's string once, not again
 * in every child's parent link (docs/adr/0149-the-organization-tree-held-as-numbered-links.md).
 *
 * An id named only as some organization's parent is numbered too, without being present: the
 * tree lists organizations that were linked themselves, and walks up through a parent it has not
 * read yet exactly as far as the parent's id.
 */
const NONE = -1;
const INITIAL_CAPACITY = 1024;

export class OrgLinks {
  private readonly numbers = new Map<string, number>();
  private ids: string[] = [];
  private present = new Uint8Array(INITIAL_CAPACITY);
  private parents = new Int32Array(INITIAL_CAPACITY).fill(NONE);
  private firstChild = new Int32Array(INITIAL_CAPACITY).fill(NONE);
  private lastChild = new Int32Array(INITIAL_CAPACITY).fill(NONE);
  private nextSibling = new Int32Array(INITIAL_CAPACITY).fill(NONE);
  private prevSibling = new Int32Array(INITIAL_CAPACITY).fill(NONE);

  has(id: string): boolean {
    const n = this.numbers.get(id);
    return n !== undefined && this.present[n] === 1;
  }

  /** Sets `id`'s parent (adding or moving it); idempotent. */
  link(id: string, parentId: string | undefined): void {
    const n = this.numberOf(id);
    const p = parentId === undefined ? NONE : this.numberOf(parentId);
    if (this.present[n] === 1 && this.parents[n] === p) return;
    this.detach(n);
    this.present[n] = 1;
    this.parents[n] = p;
    if (p !== NONE) this.append(p, n);
  }

  /** Removes `id` (its children keep their link to it). */
  unlink(id: string): void {
    const n = this.numbers.get(id);
    if (n === undefined || this.present[n] === 0) return;
    this.detach(n);
    this.present[n] = 0;
    this.parents[n] = NONE;
  }

  /** True when `orgId` is `rootId` or below it. */
  isWithin(orgId: string, rootId: string): boolean {
    const root = this.numbers.get(rootId);
    let cur = this.numbers.get(orgId);
    if (cur === undefined) return orgId === rootId;
    for (let depth = 0; cur !== NONE && depth < 10_000; depth++) {
      if (cur === root) return true;
      cur = this.parents[cur];
    }
    return false;
  }

  /** The org's direct children, in the order they were linked. */
  childrenOf(orgId: string): string[] {
    const n = this.numbers.get(orgId);
    const out: string[] = [];
    if (n === undefined) return out;
    for (let c = this.firstChild[n]; c !== NONE; c = this.nextSibling[c]) out.push(this.ids[c]);
    return out;
  }

  /** Every organization strictly below the org, breadth first, children in the order they were linked. */
  descendants(orgId: string): string[] {
    const n = this.numbers.get(orgId);
    if (n === undefined) return [];
    const queue: number[] = [];
    for (let c = this.firstChild[n]; c !== NONE; c = this.nextSibling[c]) queue.push(c);
    for (let k = 0; k < queue.length; k++) {
      for (let c = this.firstChild[queue[k]]; c !== NONE; c = this.nextSibling[c]) queue.push(c);
    }
    return queue.map((c) => this.ids[c]);
  }

  /** Ids from the org's root down to the org (an org the tree does not know: itself alone). */
  pathOf(orgId: string): string[] {
    const path: string[] = [orgId];
    let cur = this.numbers.get(orgId);
    if (cur === undefined) return path;
    for (cur = this.parents[cur]; cur !== NONE && path.length < 10_000; cur = this.parents[cur]) path.push(this.ids[cur]);
    return path.reverse();
  }

  private numberOf(id: string): number {
    const known = this.numbers.get(id);
    if (known !== undefined) return known;
    const n = this.ids.length;
    if (n === this.parents.length) this.grow();
    this.ids.push(id);
    this.numbers.set(id, n);
    return n;
  }

  /** Takes `n` out of its parent's child list (an absent id has no parent link). */
  private detach(n: number): void {
    const p = this.parents[n];
    if (p === NONE) return;
    const prev = this.prevSibling[n];
    const next = this.nextSibling[n];
    if (prev === NONE) this.firstChild[p] = next;
    else this.nextSibling[prev] = next;
    if (next === NONE) this.lastChild[p] = prev;
    else this.prevSibling[next] = prev;
    this.prevSibling[n] = NONE;
    this.nextSibling[n] = NONE;
  }

  private append(p: number, n: number): void {
    const last = this.lastChild[p];
    this.prevSibling[n] = last;
    if (last === NONE) this.firstChild[p] = n;
    else this.nextSibling[last] = n;
    this.lastChild[p] = n;
  }

  private grow(): void {
    const capacity = this.parents.length * 2;
    const widen = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(capacity).fill(NONE);
      b.set(a);
      return b;
    };
    const present = new Uint8Array(capacity);
    present.set(this.present);
    this.present = present;
    this.parents = widen(this.parents);
    this.firstChild = widen(this.firstChild);
    this.lastChild = widen(this.lastChild);
    this.nextSibling = widen(this.nextSibling);
    this.prevSibling = widen(this.prevSibling);
  }
}
