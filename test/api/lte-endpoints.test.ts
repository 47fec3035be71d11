import { expect } from 'chai';
import { expectErrorBody, uid, useTenants, type EndpointRecord, useOrg } from '../helpers/app.js';

interface Page {
  totalCount: number;
  totalPages: number;
  items: EndpointRecord[];
}

const ids = (items: { id: string }[]): string[] => items.map((i) => i.id).sort();

describe('LTE endpoints (spec 4.3)', () => {

  const w = useTenants();

  const get = (id: string): Promise<EndpointRecord> => w.t.world.endpointRecord(id);

  describe('POST /lte-endpoint', () => {
    it('saves a new LTE endpoint with every LteEndpoint field; VC_LTE by default', async () => {
      const body = {
        orgId: w.orgA,
        displayName: 'Truck 12 router',
        dataUsage: 1536.25,
        dataAllowance: 10_737_418_240,
        externalStatus: 'ACTIVE',
        iccid: '8901260123456789012',
        imei: uid('35'),
        model: 'RUT240',
        mtn: '+15145550100',
        telco: 'Telco One',
        poolOrgId: 'pool-1',
        site: { id: uid('site'), displayName: 'Depot', orgName: 'Fleet' },
      };
      const res = await w.adminA.post<EndpointRecord>('/lte-endpoint', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include(body);
      expect(res.body).to.include({ type: 'VC_LTE', version: 1, connectionStatus: 'NEVER', deleted: false });
      expect(await get(res.body.id)).to.deep.equal(res.body);
    });

    it('answers 409 for an existing id or IMEI + site; the same IMEI at another site is another device record', async () => {
      const l = await w.t.world.lte(w.orgA, { imei: uid('35'), site: { id: 'depot-1' } });
      expectErrorBody(await w.adminA.post('/lte-endpoint', { id: l.id, orgId: w.orgA }), 409);
      expectErrorBody(await w.adminA.post('/lte-endpoint', { orgId: w.orgA, imei: l.imei, site: { id: 'depot-1' } }), 409);
      const elsewhere = await w.adminA.post<EndpointRecord>('/lte-endpoint', { orgId: w.orgA, imei: l.imei, site: { id: 'depot-2' } });
      expect(elsewhere.status).to.equal(200);
    });

    it('answers 400 for bad bodies and enums, 401 without token, 403 for readers and other orgs', async () => {
      for (const body of [
        { orgId: w.orgA, type: 'VC_UTM' },
        { orgId: w.orgA, dataUsage: -1 },
        { orgId: w.orgA, dataUsage: 'lots' },
        { orgId: w.orgA, dataAllowance: 1.5 },
        { orgId: w.orgA, externalStatus: 'ON' },
        { orgId: w.orgA, connectionStatus: 'ON' },
        { orgId: w.orgA, site: { id: '' } },
        { orgId: w.orgA, site: 'depot' },
      ]) {
        expectErrorBody(await w.adminA.post('/lte-endpoint', body), 400);
      }
      expectErrorBody(await w.t.anon.post('/lte-endpoint', { orgId: w.orgA }), 401);
      expectErrorBody(await w.readerA.post('/lte-endpoint', { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.post('/lte-endpoint', { orgId: w.orgA }), 403);
    });
  });

  describe('POST /lte-endpoint/update', () => {
    it('replaces the record named by body.id and increments version; 409 when stale', async () => {
      const l = await w.t.world.lte(w.orgA, { dataUsage: 1, telco: 'A' });
      const res = await w.adminA.post<EndpointRecord>('/lte-endpoint/update', { ...l, dataUsage: 2 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id: l.id, dataUsage: 2, telco: 'A', version: 2, createdAt: l.createdAt });
      expectErrorBody(await w.adminA.post('/lte-endpoint/update', { ...l, dataUsage: 3 }), 409);
      expect((await get(l.id)).dataUsage).to.equal(2);
    });

    it('moves the IMEI + site key with the record', async () => {
      const l = await w.t.world.lte(w.orgA, { imei: uid('35'), site: { id: 'yard-1' } });
      expect((await w.adminA.post('/lte-endpoint/update', { id: l.id, orgId: w.orgA, imei: l.imei, site: { id: 'yard-2' } })).status).to.equal(200);
      expectErrorBody(await w.adminA.get(`/lte-endpoint/imei/${String(l.imei)}/site/yard-1`), 404);
      expect((await w.adminA.get<EndpointRecord>(`/lte-endpoint/imei/${String(l.imei)}/site/yard-2`)).body.id).to.equal(l.id);
    });

    it('answers 400 without id, 404 for unknown ids and other families, 401/403 for callers without rights', async () => {
      const l = await w.t.world.lte(w.orgA);
      expectErrorBody(await w.adminA.post('/lte-endpoint/update', { orgId: w.orgA }), 400);
      expectErrorBody(await w.adminA.post('/lte-endpoint/update', { id: uid('missing'), orgId: w.orgA }), 404);
      const u = await w.t.world.utm(w.orgA);
      expectErrorBody(await w.adminA.post('/lte-endpoint/update', { id: u.id, orgId: w.orgA }), 404);
      expectErrorBody(await w.adminA.post('/lte-endpoint/update', { id: l.id, orgId: w.orgA, dataUsage: -5 }), 400);
      expectErrorBody(await w.t.anon.post('/lte-endpoint/update', { id: l.id, orgId: w.orgA }), 401);
      expectErrorBody(await w.readerA.post('/lte-endpoint/update', { id: l.id, orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.post('/lte-endpoint/update', { id: l.id, orgId: w.orgA }), 403);
    });
  });

  describe('lookups', () => {
    it('GET /lte-endpoint/imei/{imei}/site/{siteId}: the one record; 404 otherwise; 403 outside the subtree', async () => {
      const l = await w.t.world.lte(w.orgA, { imei: uid('35'), site: { id: 'hq' } });
      const res = await w.readerA.get<EndpointRecord>(`/lte-endpoint/imei/${String(l.imei)}/site/hq`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(l);
      expectErrorBody(await w.readerA.get(`/lte-endpoint/imei/${String(l.imei)}/site/elsewhere`), 404);
      expectErrorBody(await w.readerA.get(`/lte-endpoint/imei/${uid('none')}/site/hq`), 404);
      expectErrorBody(await w.adminB.get(`/lte-endpoint/imei/${String(l.imei)}/site/hq`), 403);
      expectErrorBody(await w.t.anon.get(`/lte-endpoint/imei/${String(l.imei)}/site/hq`), 401);
      await w.t.admin.delete(`/endpoint/${l.id}`);
      expectErrorBody(await w.readerA.get(`/lte-endpoint/imei/${String(l.imei)}/site/hq`), 404);
    });

    it('GET /lte-endpoint/site/{siteId}: every LTE there within the caller’s reach', async () => {
      const site = uid('site');
      const a = await w.t.world.lte(w.orgA, { site: { id: site } });
      const b = await w.t.world.lte(w.orgA, { site: { id: site } });
      const foreign = await w.t.world.lte(w.orgB, { site: { id: site } });
      await w.t.world.utm(w.orgA, { siteId: site, site: { id: site } });
      expect(ids((await w.readerA.get<EndpointRecord[]>(`/lte-endpoint/site/${site}`)).body)).to.deep.equal(ids([a, b]));
      expect(ids((await w.t.admin.get<EndpointRecord[]>(`/lte-endpoint/site/${site}`)).body)).to.deep.equal(ids([a, b, foreign]));
      expect((await w.readerA.get(`/lte-endpoint/site/${uid('none')}`)).body).to.deep.equal([]);
      expectErrorBody(await w.t.anon.get(`/lte-endpoint/site/${site}`), 401);
    });
  });

  describe('GET /lte-endpoint/data-usage-sum', () => {
    it('sums dataUsage over the caller’s visible, live LTE endpoints, as text/plain', async () => {
      const org = await w.t.world.org();
      const child = await w.t.world.org(org);
      const reader = w.t.world.as(await w.t.world.token('reader', org));
      const empty = await reader.get('/lte-endpoint/data-usage-sum');
      expect(empty.status).to.equal(200);
      expect(empty.headers.get('content-type')).to.match(/^text\/plain/);
      expect(empty.text).to.equal('0');
      await w.t.world.lte(org, { dataUsage: 100.5 });
      await w.t.world.lte(child, { dataUsage: 20.25 });
      await w.t.world.lte(org);
      const gone = await w.t.world.lte(org, { dataUsage: 1000 });
      await w.t.admin.delete(`/endpoint/${gone.id}`);
      await w.t.world.lte(w.orgB, { dataUsage: 5000 });
      const res = await reader.get('/lte-endpoint/data-usage-sum');
      expect(res.text).to.equal('120.75');
      const childReader = w.t.world.as(await w.t.world.token('reader', child));
      expect((await childReader.get('/lte-endpoint/data-usage-sum')).text).to.equal('20.25');
      expectErrorBody(await w.t.anon.get('/lte-endpoint/data-usage-sum'), 401);
    });
  });

  describe('POST /lte-endpoint/search', () => {
    const o = useOrg();
    const made: Record<string, EndpointRecord> = {};

    before(async () => {
      made.low = await w.t.world.lte(o.org, { dataUsage: 10 });
      made.high = await w.t.world.lte(o.org, { dataUsage: 500 });
      made.none = await w.t.world.lte(o.org);
      made.child = await w.t.world.lte(o.child, { dataUsage: 900 });
      await w.t.world.utm(o.org);
      await w.t.world.endpoint(o.org);
    });

    const search = async (criteria: Record<string, unknown>, pageRequest?: Record<string, unknown>): Promise<Page> => {
      const res = await o.admin.post<Page>('/lte-endpoint/search', { criteria, ...(pageRequest ? { pageRequest } : {}) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };

    it('filters by orgId (with includeChildren) and dataUsageGreaterThen, within the subtree', async () => {
      expect(ids((await search({})).items)).to.deep.equal(ids(Object.values(made)));
      expect(ids((await search({ orgId: o.org })).items)).to.deep.equal(ids([made.low, made.high, made.none]));
      expect(ids((await search({ orgId: o.org, includeChildren: true })).items)).to.deep.equal(ids(Object.values(made)));
      expect(ids((await search({ dataUsageGreaterThen: 10 })).items)).to.deep.equal(ids([made.high, made.child]));
      expect(ids((await search({ orgId: o.org, dataUsageGreaterThen: 9.5 })).items)).to.deep.equal(ids([made.low, made.high]));
    });

    it('pages and sorts by dataUsage', async () => {
      const p = await search({}, { page: 0, size: 2, sort: [{ field: 'dataUsage', direction: 'DESC' }] });
      expect(p.totalCount).to.equal(4);
      expect(p.totalPages).to.equal(2);
      expect(p.items.map((i) => i.dataUsage)).to.deep.equal([900, 500]);
    });

    it('answers 400 for bad criteria, 401 without token, 403 for an org outside the subtree', async () => {
      expectErrorBody(await o.admin.post('/lte-endpoint/search', { criteria: { dataUsageGreaterThen: 'big' } }), 400);
      expectErrorBody(await o.admin.post('/lte-endpoint/search', { criteria: { includeChildren: 'yes' } }), 400);
      expectErrorBody(await o.admin.post('/lte-endpoint/search', { pageRequest: { sort: [{ field: 'iccid', direction: 'UP' }] } }), 400);
      expectErrorBody(await w.t.anon.post('/lte-endpoint/search', {}), 401);
      expectErrorBody(await o.admin.post('/lte-endpoint/search', { criteria: { orgId: w.orgB } }), 403);
    });
  });
});
