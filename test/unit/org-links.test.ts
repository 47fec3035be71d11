/**
 * The organization tree's numbered links against the plainest model of them: a map of parents
 * and a set of children per parent. Random sequences of links (adds and moves, to known and
 * not-yet-known parents) and unlinks; after every step each query answers as the model does,
 * for every id and pair of ids. fast-check prints the seed and the shrunk sequence of a failure.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { OrgLinks } from '../../src/resources/organizations/org-links.js';

class ModelTree {
  parent = new Map<string, string | undefined>();
  children = new Map<string, Set<string>>();

  link(id: string, parentId: string | undefined): void {
    const had = this.parent.has(id);
    const old = this.parent.get(id);
    if (had && old === parentId) return;
    if (old !== undefined) this.children.get(old)?.delete(id);
    this.parent.set(id, parentId);
    if (parentId === undefined) return;
    let set = this.children.get(parentId);
    if (!set) this.children.set(parentId, (set = new Set()));
    set.add(id);
  }

  unlink(id: string): void {
    if (!this.parent.has(id)) return;
    const old = this.parent.get(id);
    if (old !== undefined) this.children.get(old)?.delete(id);
    this.parent.delete(id);
  }

  isWithin(orgId: string, rootId: string): boolean {
    let cur: string | undefined = orgId;
    for (let depth = 0; cur !== undefined && depth < 10_000; depth++) {
      if (cur === rootId) return true;
      if (!this.parent.has(cur)) return false;
      cur = this.parent.get(cur);
    }
    return false;
  }

  descendants(orgId: string): string[] {
    const out: string[] = [];
    const queue = [...(this.children.get(orgId) ?? [])];
    for (let k = 0; k < queue.length; k++) {
      out.push(queue[k]);
      for (const c of this.children.get(queue[k]) ?? []) queue.push(c);
    }
    return out;
  }

  pathOf(orgId: string): string[] {
    const path: string[] = [];
    let cur: string | undefined = orgId;
    while (cur !== undefined && path.length < 10_000) {
      path.push(cur);
      cur = this.parent.get(cur);
    }
    return path.reverse();
  }
}

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
type Step = { kind: 'link'; id: string; parent: string | undefined } | { kind: 'unlink'; id: string };

/** True when linking `id` below `parent` would close a cycle in the model (the service refuses such moves). */
function closesCycle(m: ModelTree, id: string, parent: string | undefined): boolean {
  for (let at = parent, hops = 0; at !== undefined && hops < IDS.length + 1; at = m.parent.get(at), hops++) if (at === id) return true;
  return false;
}

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('link' as const), id: fc.constantFrom(...IDS), parent: fc.option(fc.constantFrom(...IDS), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('unlink' as const), id: fc.constantFrom(...IDS) }) },
);

describe('the organization tree held as numbered links', () => {
  it('answers every query as a map of parents and sets of children does, through random links, moves and unlinks', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const model = new ModelTree();
        const links = new OrgLinks();
        for (const s of steps) {
          if (s.kind === 'link') {
            if (closesCycle(model, s.id, s.parent)) continue;
            model.link(s.id, s.parent);
            links.link(s.id, s.parent);
          } else {
            model.unlink(s.id);
            links.unlink(s.id);
          }
          expect(IDS.filter((id) => links.has(id)), 'present').to.deep.equal(IDS.filter((id) => model.parent.has(id)));
          for (const id of [...IDS, 'unknown']) {
            expect(links.has(id), `has ${id}`).to.equal(model.parent.has(id));
            expect(links.pathOf(id).at(-2), `parent of ${id}`).to.equal(model.parent.get(id));
            expect(links.childrenOf(id), `childrenOf ${id}`).to.deep.equal([...(model.children.get(id) ?? [])]);
            expect(links.descendants(id), `descendants ${id}`).to.deep.equal(model.descendants(id));
            expect(links.pathOf(id), `pathOf ${id}`).to.deep.equal(model.pathOf(id));
            for (const root of [...IDS, 'unknown']) expect(links.isWithin(id, root), `isWithin ${id} ${root}`).to.equal(model.isWithin(id, root));
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('grows past its first capacity and keeps every link', () => {
    const links = new OrgLinks();
    // Four levels as the large data sets have them: 10 roots, 100 below each, 10 below those, and so on.
    const ids: string[] = [];
    for (let r = 0; r < 10; r++) {
      links.link(`r${r}`, undefined);
      for (let c = 0; c < 100; c++) {
        links.link(`r${r}-c${c}`, `r${r}`);
        for (let s = 0; s < 5; s++) {
          const id = `r${r}-c${c}-s${s}`;
          links.link(id, `r${r}-c${c}`);
          ids.push(id);
        }
      }
    }
    const roots = Array.from({ length: 10 }, (_, r) => `r${r}`);
    expect(roots.filter((r) => links.has(r)).length + roots.reduce((t, r) => t + links.descendants(r).length, 0)).to.equal(10 + 1000 + 5000);
    expect(ids.every((id) => links.has(id))).to.equal(true);
    expect(links.pathOf('r7-c42-s3')).to.deep.equal(['r7', 'r7-c42', 'r7-c42-s3']);
    expect(links.isWithin('r7-c42-s3', 'r7')).to.equal(true);
    expect(links.isWithin('r7-c42-s3', 'r6')).to.equal(false);
    expect(links.descendants('r3')).to.have.length(600);
    expect(links.childrenOf('r9-c99')).to.deep.equal(['r9-c99-s0', 'r9-c99-s1', 'r9-c99-s2', 'r9-c99-s3', 'r9-c99-s4']);
  });
});
