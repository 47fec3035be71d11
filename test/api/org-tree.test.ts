/**
 * GET /org/tree (extension, issue 13): the organizations of the caller's subtree with names and
 * parents, for the console's scope picker; never an organization outside it.
 *
 *   msp ─┬─ custA ── siteA1
 *        └─ custB
 *   other (unrelated)
 */
import { expect } from 'chai';
import { expectErrorBody, sharedApp, type TestApp } from '../helpers/app.js';

interface Tree {
  organizations: { id: string; name: string; parentId?: string }[];
  truncated: boolean;
}

describe('GET /org/tree (the caller\'s organization subtree)', () => {
  let t: TestApp;
  let msp: string;
  let custA: string;
  let custB: string;
  let siteA1: string;
  let other: string;

  before(async () => {
    t = await sharedApp();
    msp = await t.world.org();
    [custA, custB, other] = await Promise.all([t.world.org(msp), t.world.org(msp), t.world.org()]);
    siteA1 = await t.world.org(custA);
  });

  const tree = async (token: string) => {
    const res = await t.world.as(token).get<Tree>('/org/tree');
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("answers an admin's and a reader's own subtree with names and parents, nothing else", async () => {
    for (const role of ['admin', 'reader'] as const) {
      const body = await tree(await t.world.token(role, msp));
      expect(body.truncated).to.equal(false);
      const byId = new Map(body.organizations.map((o) => [o.id, o]));
      expect([...byId.keys()].sort()).to.deep.equal([msp, custA, custB, siteA1].sort());
      expect(byId.get(siteA1)).to.include({ parentId: custA, name: `Org ${siteA1}` });
      expect(byId.get(msp)?.parentId).to.equal(undefined);
    }
    const below = await tree(await t.world.token('reader', custA));
    expect(below.organizations.map((o) => o.id).sort()).to.deep.equal([custA, siteA1].sort());
    expect(below.organizations.find((o) => o.id === custA)?.parentId, 'the parent outside the subtree is named, not listed').to.equal(msp);
  });

  it('answers a system token every organization', async () => {
    const ids = (await t.admin.get<Tree>('/org/tree')).body.organizations.map((o) => o.id);
    expect(ids).to.include.members([msp, custA, custB, siteA1, other]);
  });

  it('refuses agent tokens (403) and callers without a token (401)', async () => {
    const ep = await t.world.endpoint(custB);
    expectErrorBody(await t.world.as(await t.world.token('agent', custB, ep.id)).get('/org/tree'), 403, '/endpoint-control-service/v1/org/tree');
    expectErrorBody(await t.anon.get('/org/tree'), 401);
  });
});
