import { expect } from 'chai';
import { expectErrorBody, uid, useTenants, type EndpointRecord, useOrg } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface Page {
  totalCount: number;
  totalPages: number;
  items: EndpointRecord[];
}

const ids = (items: { id: string }[]): string[] => items.map((i) => i.id).sort();
const PATCH_TYPE = 'application/json-patch+json';

describe('UTM endpoints (spec 4.2)', () => {

  const w = useTenants();

  const get = async (id: string): Promise<EndpointRecord> => {
    const res = await w.t.anon.get<EndpointRecord>(`/utm-endpoint/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const jsonPatch = (api: Api, id: string, ops: unknown): ReturnType<Api['patch']> =>
    api.request('PATCH', `/utm-endpoint/${id}`, { body: ops, contentType: PATCH_TYPE });

  describe('POST /utm-endpoint and GET /utm-endpoint/{id}', () => {
    it('registers a UTM without a token (no sec): generated id, EXTERNAL_UTM by default, every UtmEndpoint field kept', async () => {
      const body = {
        orgId: w.orgA,
        displayName: 'Branch firewall',
        serialId: uid('Q2XX'),
        siteId: uid('site'),
        lastMacAddress: '00:18:0A:AA:BB:01',
        lastEventUpdateTs: '2024-05-01T10:00:00Z',
        lastSecurityEventUpdateTs: '2024-05-01T11:00:00Z',
        merakiNetworkId: uid('N'),
        model: 'MX68',
        commonName: uid('fw.example.com'),
        manufacturer: 'Acme',
        latitude: 45.5,
        longitude: -73.6,
        site: { id: uid('s'), orgName: 'Acme Corp', displayName: 'HQ', address: { city: 'Montreal', tags: [{ name: 'zone', prefix: 'z', value: '1' }] } },
        wanStatus: 'WAN1',
        externalStatus: 'PROVISIONING',
      };
      const res = await w.t.anon.post<EndpointRecord>('/utm-endpoint', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const u = res.body;
      expect(u).to.deep.include({ ...body, lastEventUpdateTs: '2024-05-01T10:00:00.000Z', lastSecurityEventUpdateTs: '2024-05-01T11:00:00.000Z' });
      expect(u).to.include({ type: 'EXTERNAL_UTM', version: 1, connectionStatus: 'NEVER', deleted: false });
      expect(await get(u.id)).to.deep.equal(u);
    });

    it('accepts VC_UTM; refuses other families, bad enums and bad values with 400', async () => {
      expect((await w.t.world.utm(w.orgA, { type: 'VC_UTM' })).type).to.equal('VC_UTM');
      for (const body of [
        { orgId: w.orgA, type: 'VC_ENDPOINT' },
        { orgId: w.orgA, type: 'VC_LTE' },
        { orgId: w.orgA, wanStatus: 'WAN3' },
        { orgId: w.orgA, connectionStatus: 'UP' },
        { orgId: w.orgA, externalStatus: 'GONE' },
        { orgId: w.orgA, latitude: 123 },
        { orgId: w.orgA, serialId: '' },
        { displayName: 'no org' },
      ]) {
        expectErrorBody(await w.t.anon.post('/utm-endpoint', body), 400);
      }
    });

    it('verifies a token when one is sent: 401 for a bad one, 403 for readers and other orgs', async () => {
      expectErrorBody(await w.t.world.as('bogus').post('/utm-endpoint', { orgId: w.orgA }), 401);
      expectErrorBody(await w.readerA.post('/utm-endpoint', { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.post('/utm-endpoint', { orgId: w.orgA }), 403);
      expect((await w.adminA.post('/utm-endpoint', { orgId: w.orgA, serialId: uid('S') })).status).to.equal(200);
    });

    it('answers 409 for an existing id, serial, MAC (any notation) or common name (any case)', async () => {
      const u = await w.t.world.utm(w.orgA, { lastMacAddress: 'AA:BB:CC:00:11:22', commonName: 'FW-1.Example.COM'.replace('1', uid('')) });
      expectErrorBody(await w.t.anon.post('/utm-endpoint', { id: u.id, orgId: w.orgA }), 409);
      expectErrorBody(await w.t.anon.post('/utm-endpoint', { orgId: w.orgA, serialId: u.serialId }), 409);
      expectErrorBody(await w.t.anon.post('/utm-endpoint', { orgId: w.orgB, lastMacAddress: 'aa-bb-cc-00-11-22' }), 409);
      expectErrorBody(await w.t.anon.post('/utm-endpoint', { orgId: w.orgA, commonName: String(u.commonName).toLowerCase() }), 409);
      // The refused creates left nothing behind: the original still answers every lookup.
      expect((await w.t.anon.get<EndpointRecord>(`/utm-endpoint/serial/${String(u.serialId)}`)).body.id).to.equal(u.id);
      expect((await w.t.anon.get<EndpointRecord>('/utm-endpoint/mac/aabbcc001122')).body.id).to.equal(u.id);
    });

    it('lets exactly one of concurrent registrations of the same serial win', async () => {
      const serialId = uid('RACE');
      const results = await Promise.all(Array.from({ length: 6 }, () => w.t.anon.post<EndpointRecord>('/utm-endpoint', { orgId: w.orgA, serialId })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([200, 409, 409, 409, 409, 409]);
      const winner = results.find((r) => r.status === 200)?.body as EndpointRecord;
      expect((await w.t.anon.get<EndpointRecord>(`/utm-endpoint/serial/${serialId}`)).body.id).to.equal(winner.id);
    });

    it('GET answers 404 for an agent, an LTE, a deleted or an unknown id; 403 outside the subtree', async () => {
      const agent = await w.t.world.endpoint(w.orgA);
      const lte = await w.t.world.lte(w.orgA);
      const gone = await w.t.world.utm(w.orgA);
      await w.t.admin.delete(`/endpoint/${gone.id}`);
      for (const id of [agent.id, lte.id, gone.id, uid('missing')]) expectErrorBody(await w.t.anon.get(`/utm-endpoint/${id}`), 404);
      const u = await w.t.world.utm(w.orgA);
      expectErrorBody(await w.adminB.get(`/utm-endpoint/${u.id}`), 403);
      expect((await w.readerA.get(`/utm-endpoint/${u.id}`)).status).to.equal(200);
    });
  });

  describe('PUT /utm-endpoint/{id}', () => {
    it('replaces and increments version; 409 for a stale version', async () => {
      const u = await w.t.world.utm(w.orgA, { model: 'MX64' });
      const res = await w.t.anon.put<EndpointRecord>(`/utm-endpoint/${u.id}`, { ...u, model: 'MX67' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ model: 'MX67', version: 2, serialId: u.serialId, createdAt: u.createdAt });
      expectErrorBody(await w.t.anon.put(`/utm-endpoint/${u.id}`, { ...u, model: 'MX99' }), 409);
      expect((await get(u.id)).model).to.equal('MX67');
    });

    it('moves unique keys: the new serial answers, the old one is free for another UTM; a taken serial is 409', async () => {
      const u = await w.t.world.utm(w.orgA);
      const other = await w.t.world.utm(w.orgA);
      const oldSerial = String(u.serialId);
      const newSerial = uid('NEW');
      expect((await w.t.anon.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA, serialId: newSerial })).status).to.equal(200);
      expect((await w.t.anon.get<EndpointRecord>(`/utm-endpoint/serial/${newSerial}`)).body.id).to.equal(u.id);
      expectErrorBody(await w.t.anon.get(`/utm-endpoint/serial/${oldSerial}`), 404);
      expect((await w.t.world.utm(w.orgA, { serialId: oldSerial })).serialId).to.equal(oldSerial);
      expectErrorBody(await w.t.anon.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA, serialId: other.serialId }), 409);
      expect((await get(u.id)).serialId).to.equal(newSerial);
    });

    it('answers 400 for bad bodies, 404 for other families, 403 for readers and other orgs', async () => {
      const u = await w.t.world.utm(w.orgA);
      expectErrorBody(await w.t.anon.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA, wanStatus: 'LTE' }), 400);
      expectErrorBody(await w.t.anon.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA, type: 'VC_LTE' }), 400);
      const agent = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.t.anon.put(`/utm-endpoint/${agent.id}`, { orgId: w.orgA }), 404);
      expectErrorBody(await w.readerA.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.put(`/utm-endpoint/${u.id}`, { orgId: w.orgA }), 403);
      expectErrorBody(await w.t.world.as('bogus').put(`/utm-endpoint/${u.id}`, { orgId: w.orgA }), 401);
    });
  });

  describe('PATCH /utm-endpoint/{id} (JSON Patch)', () => {
    it('applies add, replace, remove, copy, move and test operations', async () => {
      const u = await w.t.world.utm(w.orgA, { model: 'MX64', manufacturer: 'Acme', displayName: 'fw' });
      const res = await jsonPatch(w.adminA, u.id, [
        { op: 'test', path: '/version', value: 1 },
        { op: 'replace', path: '/model', value: 'MX75' },
        { op: 'add', path: '/site', value: { id: 'site-9', orgName: 'Branch' } },
        { op: 'remove', path: '/manufacturer' },
        { op: 'copy', from: '/displayName', path: '/merakiNetworkId' },
        { op: 'MOVE', from: '/merakiNetworkId', path: '/siteId' },
      ]);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const r = res.body as EndpointRecord;
      expect(r).to.include({ model: 'MX75', siteId: 'fw', version: 2 });
      expect(r.site).to.deep.equal({ id: 'site-9', orgName: 'Branch' });
      expect(r).to.not.have.property('manufacturer');
      expect(r).to.not.have.property('merakiNetworkId');
      expect(await get(u.id)).to.deep.equal(r);
    });

    it("accepts the spec's JsonNode body: one {op, path, value} object is a patch of one operation", async () => {
      const u = await w.t.world.utm(w.orgA, { model: 'MX64' });
      const res = await w.adminA.request<EndpointRecord>('PATCH', `/utm-endpoint/${u.id}`, {
        body: { op: 'replace', path: '/model', value: 'MX85' },
        contentType: PATCH_TYPE,
        // The document describes the RFC 6902 array only (a union of an array and an object does
        // not compile in generated Java clients); the spec's JsonNode also takes one operation.
        checkRequest: false,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ model: 'MX85', version: 2 });
      expectErrorBody(
        await w.adminA.request('PATCH', `/utm-endpoint/${u.id}`, { body: { op: 'explode', path: '/model' }, contentType: PATCH_TYPE }),
        400,
      );
    });

    it('answers 405 for operations on server-owned fields and leaves the record alone', async () => {
      const u = await w.t.world.utm(w.orgA);
      for (const op of [
        { op: 'replace', path: '/id', value: 'x' },
        { op: 'replace', path: '/version', value: 9 },
        { op: 'replace', path: '/type', value: 'VC_UTM' },
        { op: 'replace', path: '/createdAt', value: '2020-01-01T00:00:00Z' },
        { op: 'replace', path: '/createdBy/username', value: 'me' },
        { op: 'remove', path: '/updatedAt' },
        { op: 'add', path: '/updatedBy', value: {} },
        { op: 'replace', path: '/deleted', value: true },
        { op: 'move', from: '/id', path: '/displayName' },
        { op: 'replace', path: '', value: {} },
      ]) {
        const res = await jsonPatch(w.adminA, u.id, [op]);
        expectErrorBody(res, 405);
      }
      expect((await get(u.id)).version).to.equal(1);
    });

    it('answers 400 for malformed patches, failed tests and results that are not a valid UtmEndpoint', async () => {
      const u = await w.t.world.utm(w.orgA);
      for (const ops of [
        { op: 'replace', path: '/model', value: 'x' },
        [{ op: 'frobnicate', path: '/model' }],
        [{ op: 'replace', value: 'x' }],
        [{ op: 'remove', path: '/manufacturer' }],
        [{ op: 'replace', path: '/site/address/city', value: 'x' }],
        [{ op: 'test', path: '/version', value: 99 }],
        [{ op: 'replace', path: '/wanStatus', value: 'WAN3' }],
        [{ op: 'add', path: '/latitude', value: 'north' }],
        [{ op: 'remove', path: '/orgId' }],
        [{ op: 'add', path: 'model', value: 'no leading slash' }],
        [{ op: 'add', path: '/__proto__/polluted', value: 1 }],
      ]) {
        expectErrorBody(await jsonPatch(w.adminA, u.id, ops), 400);
      }
      const raw = await w.adminA.request('PATCH', `/utm-endpoint/${u.id}`, { raw: '[{"op":', contentType: PATCH_TYPE });
      expectErrorBody(raw, 400);
      expect((await get(u.id)).version).to.equal(1);
    });

    it('answers 404 for other families and unknown ids, 401 without token (sec), 403 for readers and other orgs', async () => {
      const u = await w.t.world.utm(w.orgA);
      const op = [{ op: 'replace', path: '/model', value: 'x' }];
      expectErrorBody(await jsonPatch(w.adminA, (await w.t.world.endpoint(w.orgA)).id, op), 404);
      expectErrorBody(await jsonPatch(w.adminA, uid('missing'), op), 404);
      expectErrorBody(await jsonPatch(w.t.anon, u.id, op), 401);
      expectErrorBody(await jsonPatch(w.readerA, u.id, op), 403);
      expectErrorBody(await jsonPatch(w.adminB, u.id, op), 403);
    });

    it('keeps unique keys: patching to a taken MAC is 409', async () => {
      const a = await w.t.world.utm(w.orgA, { lastMacAddress: '02:00:00:00:00:0a' });
      const b = await w.t.world.utm(w.orgA);
      expectErrorBody(await jsonPatch(w.adminA, b.id, [{ op: 'add', path: '/lastMacAddress', value: '02-00-00-00-00-0A' }]), 409);
      expect((await w.t.anon.get<EndpointRecord>('/utm-endpoint/mac/02:00:00:00:00:0a')).body.id).to.equal(a.id);
    });
  });

  describe('PATCH /utm-endpoint/{id}/connectionStatus/{connectionStatus}', () => {
    it('sets every ConnectionStatus value; 200 with no body', async () => {
      const u = await w.t.world.utm(w.orgA);
      for (const status of ['CONNECTED', 'POTENTIALLY_DISCONNECTED', 'DISCONNECTED', 'NEVER', 'UNINSTALLED']) {
        const res = await w.t.anon.patch(`/utm-endpoint/${u.id}/connectionStatus/${status}`);
        expect(res.status).to.equal(200);
        expect(res.text).to.equal('');
        expect((await get(u.id)).connectionStatus).to.equal(status);
      }
      expect((await get(u.id)).lastConnect).to.be.a('string');
    });

    it('answers 400 for a bad value, 404 for other families, 403 for readers and other orgs', async () => {
      const u = await w.t.world.utm(w.orgA);
      expectErrorBody(await w.t.anon.patch(`/utm-endpoint/${u.id}/connectionStatus/ONLINE`), 400);
      expectErrorBody(await w.t.anon.patch(`/utm-endpoint/${u.id}/connectionStatus/connected`), 400);
      const agent = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.t.anon.patch(`/utm-endpoint/${agent.id}/connectionStatus/CONNECTED`), 404);
      expect((await w.t.admin.get<EndpointRecord>(`/endpoint/${agent.id}`)).body.connectionStatus).to.equal('NEVER');
      expectErrorBody(await w.t.anon.patch(`/utm-endpoint/${uid('missing')}/connectionStatus/CONNECTED`), 404);
      expectErrorBody(await w.readerA.patch(`/utm-endpoint/${u.id}/connectionStatus/CONNECTED`), 403);
      expectErrorBody(await w.adminB.patch(`/utm-endpoint/${u.id}/connectionStatus/CONNECTED`), 403);
      expect((await w.adminA.patch(`/utm-endpoint/${u.id}/connectionStatus/CONNECTED`)).status).to.equal(200);
    });
  });

  describe('POST /utm-endpoint/serial/{serial}/interface/{name}', () => {
    it('moves wanStatus to the WAN that carries traffic: WAN1 down → WAN2, WAN1 up again → WAN1', async () => {
      const u = await w.t.world.utm(w.orgA, { wanStatus: 'WAN1' });
      const report = (name: string, status: string): ReturnType<Api['post']> =>
        w.t.anon.post<EndpointRecord>(`/utm-endpoint/serial/${String(u.serialId)}/interface/${name}`, { status });
      let res = await report('WAN2', 'ACTIVE');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((res.body as EndpointRecord).wanStatus).to.equal('WAN1');
      res = await report('WAN1', 'INACTIVE');
      expect((res.body as EndpointRecord).wanStatus).to.equal('WAN2');
      expect((res.body as EndpointRecord).id).to.equal(u.id);
      res = await report('WAN1', 'ACTIVE');
      expect((res.body as EndpointRecord).wanStatus).to.equal('WAN1');
      expect((await get(u.id)).wanStatus).to.equal('WAN1');
      expect(await get(u.id)).to.not.have.property('interfaces');
    });

    it('answers 400 for a bad name, status or body; 404 for an unknown serial; 403 for readers', async () => {
      const u = await w.t.world.utm(w.orgA);
      const base = `/utm-endpoint/serial/${String(u.serialId)}/interface`;
      expectErrorBody(await w.t.anon.post(`${base}/WAN3`, { status: 'ACTIVE' }), 400);
      expectErrorBody(await w.t.anon.post(`${base}/WAN1`, { status: 'UP' }), 400);
      expectErrorBody(await w.t.anon.post(`${base}/WAN1`, {}), 400);
      expectErrorBody(await w.t.anon.post(`${base}/WAN1`), 400);
      expectErrorBody(await w.t.anon.post(`/utm-endpoint/serial/${uid('nope')}/interface/WAN1`, { status: 'ACTIVE' }), 404);
      expectErrorBody(await w.readerA.post(`${base}/WAN1`, { status: 'ACTIVE' }), 403);
    });
  });

  describe('single-record lookups', () => {
    let u: EndpointRecord;
    before(async () => {
      u = await w.t.world.utm(w.orgA, {
        siteId: uid('site'),
        lastMacAddress: '0A:1B:2C:3D:4E:5F',
        commonName: `${uid('fw')}.Example.com`,
        merakiNetworkId: uid('net'),
      });
    });

    it('by serial, serial + site, MAC (any notation) and common name (any case)', async () => {
      for (const path of [
        `/utm-endpoint/serial/${String(u.serialId)}`,
        `/utm-endpoint/serial/${String(u.serialId)}/site/${String(u.siteId)}`,
        '/utm-endpoint/mac/0a1b2c3d4e5f',
        '/utm-endpoint/mac/0A-1B-2C-3D-4E-5F',
        `/utm-endpoint/common-name/${String(u.commonName).toUpperCase()}`,
      ]) {
        const res = await w.t.anon.get<EndpointRecord>(path);
        expect(res.status, path).to.equal(200);
        expect(res.body).to.deep.equal(u);
      }
    });

    it('answer 404 when nothing matches (also a serial at another site), 403 outside the subtree', async () => {
      for (const path of [
        `/utm-endpoint/serial/${uid('none')}`,
        `/utm-endpoint/serial/${String(u.serialId)}/site/other-site`,
        '/utm-endpoint/mac/ff:ff:ff:ff:ff:fe',
        `/utm-endpoint/common-name/${uid('none')}`,
      ]) {
        expectErrorBody(await w.t.anon.get(path), 404);
      }
      expectErrorBody(await w.adminB.get(`/utm-endpoint/serial/${String(u.serialId)}`), 403);
      expectErrorBody(await w.adminB.get('/utm-endpoint/mac/0a1b2c3d4e5f'), 403);
      expect((await w.readerA.get(`/utm-endpoint/serial/${String(u.serialId)}`)).status).to.equal(200);
    });

    it('by site and by firewall network id return every UTM there (within the caller’s reach)', async () => {
      const same = await w.t.world.utm(w.orgA, { siteId: u.siteId, merakiNetworkId: u.merakiNetworkId });
      const foreign = await w.t.world.utm(w.orgB, { siteId: u.siteId, merakiNetworkId: u.merakiNetworkId });
      await w.t.world.lte(w.orgA, { site: { id: String(u.siteId) } });
      const bySite = await w.t.anon.get<EndpointRecord[]>(`/utm-endpoint/site/${String(u.siteId)}`);
      expect(ids(bySite.body)).to.deep.equal(ids([u, same, foreign]));
      const byNet = await w.t.anon.get<EndpointRecord[]>(`/utm-endpoint/vendor-network/${String(u.merakiNetworkId)}`);
      expect(ids(byNet.body)).to.deep.equal(ids([u, same, foreign]));
      expect(ids((await w.adminA.get<EndpointRecord[]>(`/utm-endpoint/site/${String(u.siteId)}`)).body)).to.deep.equal(ids([u, same]));
      expect(ids((await w.adminB.get<EndpointRecord[]>(`/utm-endpoint/vendor-network/${String(u.merakiNetworkId)}`)).body)).to.deep.equal([foreign.id]);
      expect((await w.t.anon.get<EndpointRecord[]>(`/utm-endpoint/site/${uid('empty')}`)).body).to.deep.equal([]);
    });
  });

  describe('searchPage, count and model aggregation', () => {
    const o = useOrg();
    const made: Record<string, EndpointRecord> = {};

    before(async () => {
      made.a = await w.t.world.utm(o.org, { model: 'MX64', connectionStatus: 'CONNECTED', externalStatus: 'ACTIVE', wanStatus: 'WAN1', siteId: 'site-a', site: { id: 'key-a', orgName: 'Alpha' } });
      made.b = await w.t.world.utm(o.org, { model: 'MX64', connectionStatus: 'DISCONNECTED', externalStatus: 'INACTIVE', wanStatus: 'WAN2', siteId: 'site-b', site: { id: 'key-b', orgName: 'Beta' } });
      made.c = await w.t.world.utm(o.org, { model: 'MX84', connectionStatus: 'CONNECTED', externalStatus: 'PROVISIONING', wanStatus: 'WAN2', siteId: 'site-a', site: { id: 'key-c', orgName: 'Alpha' } });
      made.d = await w.t.world.utm(o.child, { model: 'Z3', type: 'VC_UTM', connectionStatus: 'NEVER', siteId: 'site-d' });
      const gone = await w.t.world.utm(o.org, { model: 'GONE' });
      await w.t.admin.delete(`/endpoint/${gone.id}`);
      await w.t.world.endpoint(o.org);
      await w.t.world.lte(o.org, { model: 'LTE-1' });
      await w.t.world.utm(w.orgB, { model: 'MX64' });
    });

    const search = async (criteria: Record<string, unknown>, pageRequest?: Record<string, unknown>): Promise<Page> => {
      const res = await o.admin.post<Page>('/utm-endpoint/searchPage', { criteria, ...(pageRequest ? { pageRequest } : {}) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };
    const count = async (criteria: Record<string, unknown>): Promise<number> => {
      const res = await o.admin.post<{ count: number }>('/utm-endpoint/count', criteria);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.count;
    };

    it('empty criteria: every live UTM of the subtree (no agents, LTEs, deleted or foreign records)', async () => {
      const page = await search({});
      expect(ids(page.items)).to.deep.equal(ids(Object.values(made)));
      expect(await count({})).to.equal(4);
    });

    it('each criterion filters; search and count agree', async () => {
      const cases: [Record<string, unknown>, EndpointRecord[]][] = [
        [{ connectionStatuses: ['CONNECTED'] }, [made.a, made.c]],
        [{ connectionStatuses: ['DISCONNECTED', 'NEVER'] }, [made.b, made.d]],
        [{ externalStatuses: ['ACTIVE', 'INACTIVE'] }, [made.a, made.b]],
        [{ wanStatuses: ['WAN2'] }, [made.b, made.c]],
        [{ siteId: 'site-a' }, [made.a, made.c]],
        [{ siteOrgName: 'Alpha' }, [made.a, made.c]],
        [{ siteKey: 'key-b' }, [made.b]],
        [{ orgId: o.org }, [made.a, made.b, made.c]],
        [{ orgId: o.org, includeChildren: true }, [made.a, made.b, made.c, made.d]],
        [{ orgId: o.child }, [made.d]],
        [{ orgId: o.org, connectionStatuses: ['CONNECTED'], siteOrgName: 'Alpha', wanStatuses: ['WAN1'] }, [made.a]],
        [{ connectionStatuses: [] }, Object.values(made)],
      ];
      for (const [criteria, expected] of cases) {
        expect(ids((await search(criteria)).items), JSON.stringify(criteria)).to.deep.equal(ids(expected));
        expect(await count(criteria), JSON.stringify(criteria)).to.equal(expected.length);
      }
    });

    it('pages and sorts', async () => {
      const p = await search({}, { page: 1, size: 3, sort: [{ field: 'model', direction: 'DESC' }] });
      expect(p.totalCount).to.equal(4);
      expect(p.totalPages).to.equal(2);
      expect(p.items).to.have.length(1);
      expect(p.items[0].model).to.equal('MX64');
    });

    it('model aggregation: one bucket per model, count descending then key; same criteria and subtree', async () => {
      const res = await o.admin.post('/utm-endpoint/model/aggregation', {});
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal([
        { key: 'MX64', count: 2 },
        { key: 'MX84', count: 1 },
        { key: 'Z3', count: 1 },
      ]);
      const filtered = await o.admin.post('/utm-endpoint/model/aggregation', { connectionStatuses: ['CONNECTED'] });
      expect(filtered.body).to.deep.equal([
        { key: 'MX64', count: 1 },
        { key: 'MX84', count: 1 },
      ]);
    });

    it('model aggregation returns every model, not a top 10', async () => {
      const many = await w.t.world.org();
      const models = Array.from({ length: 13 }, (_, i) => `M${String(i).padStart(2, '0')}`);
      for (const [i, model] of models.entries()) {
        for (let n = 0; n <= i % 3; n++) await w.t.world.utm(many, { model });
      }
      const res = await w.t.admin.post<{ key: string; count: number }[]>('/utm-endpoint/model/aggregation', { orgId: many });
      expect(res.body).to.have.length(13);
      const expected = models
        .map((key, i) => ({ key, count: (i % 3) + 1 }))
        .sort((x, y) => y.count - x.count || x.key.localeCompare(y.key));
      expect(res.body).to.deep.equal(expected);
    });

    it('answer 400 for bad enums, 401 without token, 403 for an org outside the subtree and for agents', async () => {
      for (const path of ['/utm-endpoint/count', '/utm-endpoint/model/aggregation']) {
        expectErrorBody(await o.admin.post(path, { connectionStatuses: ['ONLINE'] }), 400);
        expectErrorBody(await o.admin.post(path, { wanStatuses: 'WAN1' }), 400);
        expectErrorBody(await o.admin.post(path, { externalStatuses: ['NOPE'] }), 400);
        expectErrorBody(await w.t.anon.post(path, {}), 401);
        expectErrorBody(await o.admin.post(path, { orgId: w.orgB }), 403);
      }
      expectErrorBody(await o.admin.post('/utm-endpoint/searchPage', { criteria: { connectionStatuses: ['ONLINE'] } }), 400);
      expectErrorBody(await o.admin.post('/utm-endpoint/searchPage', { criteria: { orgId: w.orgB, includeChildren: true } }), 403);
      expectErrorBody(await w.t.anon.post('/utm-endpoint/searchPage', {}), 401);
      const agent = w.t.world.as(await w.t.world.token('agent', o.org, made.a.id));
      expectErrorBody(await agent.post('/utm-endpoint/searchPage', {}), 403);
      expect(await count({})).to.equal(4);
    });
  });
});
