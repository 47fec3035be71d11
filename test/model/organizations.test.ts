/**
 * Organizations under concurrent creates, moves and renames, as a model: a forest of
 * organizations. A create is 201 once per id (409 after), 404 below an unknown parent; a move
 * below the organization itself or its subtree is 400, any other 200 (or 409 while another move
 * is still rewriting records, which changes nothing); a rename is 200. The tree read back through
 * the API must be the model's: no cycle, no lost move or rename.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, conditionalFaults, faults, History, modelProperty, type Answer } from '../helpers/model/run.js';

interface Forest {
  parents: Record<string, string | null>;
  names: Record<string, string>;
}

type Change = { kind: 'create'; id: string; parent: string | null; name: string } | { kind: 'move'; id: string; parent: string | null } | { kind: 'rename'; id: string; name: string };

function below(f: Forest, id: string, maybeDescendant: string): boolean {
  // Bounded: a tree read back with a cycle must not hang the check.
  let at: string | null = maybeDescendant;
  for (let hops = 0; at !== null && hops < 32; hops++, at = f.parents[at] ?? null) if (at === id) return true;
  return false;
}

const forest: Model<Forest, Change, Answer> = {
  step(f, c, answer) {
    const is = (status: number): boolean => answer === undefined || answer.status === status;
    switch (c.kind) {
      case 'create': {
        // The parent is checked before the id.
        if (c.parent !== null && !(c.parent in f.parents)) return is(404) ? f : undefined;
        if (c.id in f.parents) return is(409) ? f : undefined;
        if (!is(201)) return undefined;
        return { parents: { ...f.parents, [c.id]: c.parent }, names: { ...f.names, [c.id]: c.name } };
      }
      case 'move': {
        if (c.parent !== null && below(f, c.id, c.parent)) return is(400) ? f : undefined;
        if (answer?.status === 409) return f;
        if (!is(200)) return undefined;
        if (answer && ((answer.body as { parentId?: string }).parentId ?? null) !== c.parent) return undefined;
        return { ...f, parents: { ...f.parents, [c.id]: c.parent } };
      }
      case 'rename': {
        if (!is(200)) return undefined;
        if (answer && (answer.body as { name: string }).name !== c.name) return undefined;
        return { ...f, names: { ...f.names, [c.id]: c.name } };
      }
    }
  },
};

const ORGS = /^(PUT|POST) \/[^/]*-organizations\/_(doc|create)\//;

describe('model: organizations under concurrent changes', () => {
  modelProperty(
    'organization creates through two instances: one 201 per id, 404 below an unknown parent',
    fc.record({
      callers: fc.array(fc.record({
          instance: fc.integer({ min: 0, max: 1 }),
          id: fc.integer({ min: 0, max: 2 }),
          // Mostly parents that exist (none, the root), sometimes one being created, rarely a missing one.
          parent: fc.oneof({ arbitrary: fc.constantFrom(-1, 0), weight: 4 }, { arbitrary: fc.constantFrom(1, 2), weight: 2 }, { arbitrary: fc.constant(3), weight: 1 }),
          jitter: fc.integer({ min: 0, max: 15 }),
        }), {
        minLength: 2,
        maxLength: 6,
      }),
      // A create Elasticsearch sends twice meets itself and is answered 409: the gap of every conditional write but command moves.
      fault: conditionalFaults,
    }),
    async (c, s, k) => {
      const root = await c.apps[0].world.org(undefined, uid('model-root'));
      const ids = [0, 1, 2].map(() => uid('model-org'));
      // A parent: none, the root, one of the ids being created, or an organization that does not exist.
      const parentOf = (n: number): string | null => (n === -1 ? null : n === 0 ? root : n === 3 ? uid('missing') : ids[n - 1]);
      const h = new History<Change>(s);
      arm(c.proxy, k.fault, ORGS);
      await h.all(
        k.callers.map(async (p, who) => {
          const change: Change = { kind: 'create', id: ids[p.id], parent: parentOf(p.parent), name: `Org ${who}` };
          const body = { id: change.id, name: change.name, ...(change.parent ? { parentId: change.parent } : {}) };
          await h.op(who, change, `caller ${who} creates ${change.id}`, p.jitter, () => client(c, p.instance).post('/admin/organizations', body));
        }),
      );
      const seen = await readForest(c.apps[0].admin, [root, ...ids]);
      h.check(forest, { parents: { [root]: null }, names: { [root]: seen.names[root] } }, (f) => JSON.stringify(sorted(f)) === JSON.stringify(sorted(seen)), seen);
    },
  );

  modelProperty(
    'organization moves and renames through two instances: never a cycle, no lost move or rename',
    fc.record({
      callers: fc.array(
        fc.record({
          instance: fc.integer({ min: 0, max: 1 }),
          org: fc.integer({ min: 0, max: 3 }),
          parent: fc.integer({ min: -1, max: 3 }),
          rename: fc.boolean(),
          jitter: fc.integer({ min: 0, max: 15 }),
        }),
        { minLength: 2, maxLength: 4 },
      ),
      fault: faults,
    }),
    async (c, s, k) => {
      // r1 ─ x ─ y, and r2: moves may try to put r1 below y (a cycle), y below r2, and so on.
      const a = c.apps[0].world;
      const r1 = await a.org(undefined, uid('model-r1'));
      const r2 = await a.org(undefined, uid('model-r2'));
      const x = await a.org(r1, uid('model-x'));
      const y = await a.org(x, uid('model-y'));
      const orgs = [r1, r2, x, y];
      const initial = await readForest(c.apps[0].admin, orgs);
      const h = new History<Change>(s);
      arm(c.proxy, k.fault, ORGS);
      await h.all(
        k.callers.map(async (p, who) => {
          const id = orgs[p.org];
          const api = client(c, p.instance);
          if (p.rename) {
            const name = `Renamed ${who}`;
            await h.op(who, { kind: 'rename', id, name }, `caller ${who} renames ${id}`, p.jitter, () => api.patch(`/admin/organizations/${id}`, { name }));
          } else {
            const parent = p.parent === -1 ? null : orgs[p.parent];
            await h.op(who, { kind: 'move', id, parent }, `caller ${who} moves ${id} below ${parent}`, p.jitter, () => api.patch(`/admin/organizations/${id}`, { parentId: parent }));
          }
        }),
      );
      const seen = await readForest(c.apps[0].admin, orgs);
      for (const o of orgs) expect(below(seen, o, seen.parents[o] ?? o) && seen.parents[o] !== null, `a cycle through ${o}`).to.equal(false);
      h.check(forest, initial, (f) => JSON.stringify(sorted(f)) === JSON.stringify(sorted(seen)), seen);
    },
  );
});

/** The organizations that exist among `ids`, read through the API. */
async function readForest(api: import('../helpers/http.js').Api, ids: string[]): Promise<Forest> {
  const f: Forest = { parents: {}, names: {} };
  for (const id of ids) {
    const res = await api.get<{ name: string; parentId?: string }>(`/admin/organizations/${id}`);
    if (res.status === 404) continue;
    expect(res.status, res.text).to.equal(200);
    f.parents[id] = res.body.parentId ?? null;
    f.names[id] = res.body.name;
  }
  return f;
}

function sorted(f: Forest): Forest {
  const order = <T>(r: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(r).sort(([p], [q]) => p.localeCompare(q)));
  return { parents: order(f.parents), names: order(f.names) };
}
