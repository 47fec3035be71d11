/**
 * Organization moves run one at a time, and a move that waited for its turn checks its new
 * parent again in it (docs/adr/0137-organization-moves-checked-in-their-turn.md): two crossing
 * moves never make a cycle.
 *
 *   r1 ─ x ─ y      r2
 *
 * One caller moves r2 below y; it reads y (r1, x above it) and is held just before its turn.
 * Another moves r1 below r2 meanwhile. In its turn the first must find r2 above y now and refuse.
 */
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { OrgMoves } from '../../src/resources/organizations/moves.js';

interface Org {
  id: string;
  parentId?: string;
}

describe('organization moves in their turn', () => {
  let t: TestApp;
  before(async function () {
    this.timeout(180_000);
    t = await startTestApp();
  });
  after(() => t.close());

  it('a move that waited for its turn finds its new parent moved below it and refuses: never a cycle', async () => {
    const r1 = await t.world.org(undefined, uid('turn-r1'));
    const x = await t.world.org(r1, uid('turn-x'));
    const y = await t.world.org(x, uid('turn-y'));
    const r2 = await t.world.org(undefined, uid('turn-r2'));

    // Holds the move of r2 at the start of its turn, after it has read and checked its new parent.
    const begin = OrgMoves.prototype.begin;
    let held = false;
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    OrgMoves.prototype.begin = async function (this: OrgMoves, m) {
      if (m.orgId === r2) {
        held = true;
        await gate;
      }
      return begin.call(this, m);
    };
    try {
      const first = t.admin.patch(`/admin/organizations/${r2}`, { parentId: y });
      const reached = await waitFor(async () => held, (h) => h, 10_000);
      expect(reached.met, 'the move of r2 reached its turn').to.equal(true);

      const second = await t.admin.patch(`/admin/organizations/${r1}`, { parentId: r2 });
      expect(second.status, second.text).to.equal(200);
      release();

      expectErrorBody(await first, 400);
    } finally {
      release();
      OrgMoves.prototype.begin = begin;
    }

    const parentOf = async (id: string): Promise<string | undefined> => {
      const res = await t.admin.get<Org>(`/admin/organizations/${id}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.parentId;
    };
    expect(await parentOf(r2), 'r2 stays at the top').to.equal(undefined);
    expect(await parentOf(r1)).to.equal(r2);
    expect(await parentOf(x)).to.equal(r1);
    expect(await parentOf(y)).to.equal(x);
    // And a move may follow: the refused one left no move record running.
    const again = await t.admin.patch(`/admin/organizations/${y}`, { parentId: r2 });
    expect(again.status, again.text).to.equal(200);
  });
});
