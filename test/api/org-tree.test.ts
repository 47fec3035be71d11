/**
 * GET /org/tree (extension): the organizations of the caller's subtree with names and
 * parents, for the console's scope picker; never an organization outside it.
 *
 *   msp ─┬─ custA ── siteA1
 *        └─ custB
 *   other (unrelated)
 */
import { expect } from 'chai';
import { expectErrorBody, useOrgFamily } from '../helpers/app.js';

interface Tree {
  organizations: { id: string; name: string; parentId?: string }[];
  truncated: boolean;
}

describe('GET /org/tree (the caller\'s organization subtree)', () => {
  const f = useOrgFamily();

  const tree = async (token: string) => {
    const res = await f.t.world.as(token).get<Tree>('/org/tree');
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("answers an admin's and a reader's own subtree with names and parents, nothing else", async () => {
    for (const role of ['admin', 'reader'] as const) {
      const body = await tree(await f.t.world.token(role, f.msp));
      expect(body.truncated).to.equal(false);
      const byId = new Map(body.organizations.map((o) => [o.id, o]));
      expect([...byId.keys()].sort()).to.deep.equal([f.msp, f.custA, f.custB, f.siteA1].sort());
      expect(byId.get(f.siteA1)).to.include({ parentId: f.custA, name: `Org ${f.siteA1}` });
      expect(byId.get(f.msp)?.parentId).to.equal(undefined);
    }
    const below = await tree(await f.t.world.token('reader', f.custA));
    expect(below.organizations.map((o) => o.id).sort()).to.deep.equal([f.custA, f.siteA1].sort());
    expect(below.organizations.find((o) => o.id === f.custA)?.parentId, 'the parent outside the subtree is named, not listed').to.equal(f.msp);
  });

  it('answers a system token every organization', async () => {
    const ids = (await f.t.admin.get<Tree>('/org/tree')).body.organizations.map((o) => o.id);
    expect(ids).to.include.members([f.msp, f.custA, f.custB, f.siteA1, f.other]);
  });

  it('refuses agent tokens (403) and callers without a token (401)', async () => {
    const ep = await f.t.world.endpoint(f.custB);
    expectErrorBody(await f.t.world.as(await f.t.world.token('agent', f.custB, ep.id)).get('/org/tree'), 403, '/endpoint-control-service/v1/org/tree');
    expectErrorBody(await f.t.anon.get('/org/tree'), 401);
  });
});
