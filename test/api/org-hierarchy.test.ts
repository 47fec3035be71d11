/**
 * Three organization levels (an MSP, its customers, their sites): direct-children,
 * all-descendants, includeChildren, and the subtree limits of search, count and aggregation.
 *
 *   msp ─┬─ custA ── siteA1
 *        └─ custB
 *   other (unrelated)
 */
import { expect } from 'chai';
import { expectErrorBody, type EndpointRecord, useOrgFamily } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { bulkEndpoints } from '../helpers/endpoint-store.js';

const ids = (items: { id: string }[]): string[] => items.map((i) => i.id).sort();

describe('organization hierarchy (endpoints across three levels)', () => {
  const f = useOrgFamily();
  let mspReader: Api;
  let custAAdmin: Api;
  let siteReader: Api;
  const agent: Record<string, EndpointRecord> = {};
  const utm: Record<string, EndpointRecord> = {};
  const lte: Record<string, EndpointRecord> = {};

  before(async () => {
    mspReader = f.t.world.as(await f.t.world.token('reader', f.msp));
    custAAdmin = f.t.world.as(await f.t.world.token('admin', f.custA));
    siteReader = f.t.world.as(await f.t.world.token('reader', f.siteA1));
    const orgs: Record<string, string> = { msp: f.msp, custA: f.custA, custB: f.custB, siteA1: f.siteA1, other: f.other };
    for (const [name, org] of Object.entries(orgs)) {
      agent[name] = await f.t.world.endpoint(org, { displayName: `agent ${name}` });
      utm[name] = await f.t.world.utm(org, { model: `model-${name}` });
      lte[name] = await f.t.world.lte(org, { dataUsage: 1 });
    }
    // A deleted agent below the MSP never shows up.
    const gone = await f.t.world.endpoint(f.custB);
    await f.t.admin.delete(`/endpoint/${gone.id}`);
  });

  describe('GET /endpoint/by-org-id/{orgId}/direct-children and /all-descendants', () => {
    it('direct-children: agents of the direct child orgs only (not the org’s own, not grandchildren, no other families)', async () => {
      const res = await mspReader.get<EndpointRecord[]>(`/endpoint/by-org-id/${f.msp}/direct-children`);
      expect(res.status).to.equal(200);
      expect(ids(res.body)).to.deep.equal(ids([agent.custA, agent.custB]));
      expect(res.body.every((e) => e.type === 'VC_ENDPOINT')).to.equal(true);
      expect(ids((await mspReader.get<EndpointRecord[]>(`/endpoint/by-org-id/${f.custA}/direct-children`)).body)).to.deep.equal([agent.siteA1.id]);
    });

    it('all-descendants: agents of every org below (not the org’s own)', async () => {
      const res = await mspReader.get<EndpointRecord[]>(`/endpoint/by-org-id/${f.msp}/all-descendants`);
      expect(res.status).to.equal(200);
      expect(ids(res.body)).to.deep.equal(ids([agent.custA, agent.custB, agent.siteA1]));
      expect(ids((await custAAdmin.get<EndpointRecord[]>(`/endpoint/by-org-id/${f.custA}/all-descendants`)).body)).to.deep.equal([agent.siteA1.id]);
    });

    it('a leaf organization has none', async () => {
      expect((await siteReader.get(`/endpoint/by-org-id/${f.siteA1}/direct-children`)).body).to.deep.equal([]);
      expect((await siteReader.get(`/endpoint/by-org-id/${f.siteA1}/all-descendants`)).body).to.deep.equal([]);
    });

    it('lists beyond one search batch completely (point-in-time stream)', async () => {
      const top = await f.t.world.org();
      const below = await f.t.world.org(top);
      const now = new Date().toISOString();
      const by = { username: 'seed', authenticator: 'none' };
      const seeded = Array.from({ length: 1005 }, (_, i) => `bulk-${below}-${String(i).padStart(4, '0')}`);
      const res = await bulkEndpoints(
        f.t.server.store,
        seeded.flatMap((id) => [
          { create: { _id: id } },
          { id, orgId: below, type: 'VC_ENDPOINT', connectionStatus: 'NEVER', deleted: false, createdAt: now, updatedAt: now, createdBy: by, updatedBy: by },
        ]),
      );
      expect(res.errors).to.equal(false);
      const list = await f.t.admin.get<EndpointRecord[]>(`/endpoint/by-org-id/${top}/direct-children`);
      expect(list.status).to.equal(200);
      expect(list.body.map((e) => e.id)).to.deep.equal(seeded);
    });

    it('answers 403 above or beside the caller’s subtree, 401 without token', async () => {
      for (const depth of ['direct-children', 'all-descendants']) {
        expectErrorBody(await custAAdmin.get(`/endpoint/by-org-id/${f.msp}/${depth}`), 403);
        expectErrorBody(await custAAdmin.get(`/endpoint/by-org-id/${f.custB}/${depth}`), 403);
        expectErrorBody(await siteReader.get(`/endpoint/by-org-id/${f.custA}/${depth}`), 403);
        expectErrorBody(await f.t.anon.get(`/endpoint/by-org-id/${f.msp}/${depth}`), 401);
      }
    });
  });

  describe('includeChildren widens orgId to the subtree', () => {
    it('UtmCriteria: search and count', async () => {
      const narrow = await mspReader.post<{ items: EndpointRecord[] }>('/utm-endpoint/searchPage', { criteria: { orgId: f.custA } });
      expect(ids(narrow.body.items)).to.deep.equal([utm.custA.id]);
      const wide = await mspReader.post<{ items: EndpointRecord[] }>('/utm-endpoint/searchPage', { criteria: { orgId: f.custA, includeChildren: true } });
      expect(ids(wide.body.items)).to.deep.equal(ids([utm.custA, utm.siteA1]));
      expect((await mspReader.post<{ count: number }>('/utm-endpoint/count', { orgId: f.msp, includeChildren: true })).body.count).to.equal(4);
      expect((await mspReader.post<{ count: number }>('/utm-endpoint/count', { orgId: f.msp })).body.count).to.equal(1);
    });

    it('LteEndpointCriteria', async () => {
      const narrow = await mspReader.post<{ items: EndpointRecord[] }>('/lte-endpoint/search', { criteria: { orgId: f.msp } });
      expect(ids(narrow.body.items)).to.deep.equal([lte.msp.id]);
      const wide = await mspReader.post<{ items: EndpointRecord[] }>('/lte-endpoint/search', { criteria: { orgId: f.msp, includeChildren: true } });
      expect(ids(wide.body.items)).to.deep.equal(ids([lte.msp, lte.custA, lte.custB, lte.siteA1]));
    });

    it('naming an org outside the subtree is 403 even with includeChildren', async () => {
      expectErrorBody(await custAAdmin.post('/utm-endpoint/searchPage', { criteria: { orgId: f.msp, includeChildren: true } }), 403);
      expectErrorBody(await custAAdmin.post('/lte-endpoint/search', { criteria: { orgId: f.msp, includeChildren: true } }), 403);
      expectErrorBody(await custAAdmin.post('/utm-endpoint/count', { orgId: f.other }), 403);
    });
  });

  describe('empty criteria never leave the caller’s subtree', () => {
    it('a middle-level admin sees its org and the one below, in every search, count and aggregation', async () => {
      const utms = await custAAdmin.post<{ totalCount: number; items: EndpointRecord[] }>('/utm-endpoint/searchPage', {});
      expect(ids(utms.body.items)).to.deep.equal(ids([utm.custA, utm.siteA1]));
      expect((await custAAdmin.post<{ count: number }>('/utm-endpoint/count', {})).body.count).to.equal(2);
      expect((await custAAdmin.post('/utm-endpoint/model/aggregation', {})).body).to.deep.equal([
        { key: 'model-custA', count: 1 },
        { key: 'model-siteA1', count: 1 },
      ]);
      const ltes = await custAAdmin.post<{ items: EndpointRecord[] }>('/lte-endpoint/search', {});
      expect(ids(ltes.body.items)).to.deep.equal(ids([lte.custA, lte.siteA1]));
      expect((await custAAdmin.get('/lte-endpoint/data-usage-sum')).text).to.equal('2');
      const agents = await custAAdmin.post<{ items: EndpointRecord[] }>('/endpoint/page-search', {});
      expect(ids(agents.body.items)).to.deep.equal(ids([agent.custA, agent.siteA1]));
    });

    it('the top-level reader sees its whole tree and nothing of the unrelated org', async () => {
      const utms = await mspReader.post<{ items: EndpointRecord[] }>('/utm-endpoint/searchPage', { pageRequest: { size: 100 } });
      expect(ids(utms.body.items)).to.deep.equal(ids([utm.msp, utm.custA, utm.custB, utm.siteA1]));
      const agg = await mspReader.post<{ key: string }[]>('/utm-endpoint/model/aggregation', {});
      expect(agg.body.map((b) => b.key)).to.deep.equal(['model-custA', 'model-custB', 'model-msp', 'model-siteA1']);
      expect((await mspReader.get('/lte-endpoint/data-usage-sum')).text).to.equal('4');
      const agents = await mspReader.post<{ items: EndpointRecord[] }>('/endpoint/page-search', {});
      expect(ids(agents.body.items)).to.deep.equal(ids([agent.msp, agent.custA, agent.custB, agent.siteA1]));
    });

    it('a leaf reader sees only its own org’s records; reads of records above it are 403', async () => {
      expect((await siteReader.post<{ count: number }>('/utm-endpoint/count', {})).body.count).to.equal(1);
      expect(ids((await siteReader.post<{ items: EndpointRecord[] }>('/endpoint/page-search', {})).body.items)).to.deep.equal([agent.siteA1.id]);
      expectErrorBody(await siteReader.get(`/endpoint/${agent.custA.id}`), 403);
      expectErrorBody(await siteReader.get(`/utm-endpoint/${utm.msp.id}`), 403);
      expect((await siteReader.get(`/endpoint/${agent.siteA1.id}`)).status).to.equal(200);
      expect((await mspReader.get(`/endpoint/${agent.siteA1.id}`)).status).to.equal(200);
    });
  });
});
