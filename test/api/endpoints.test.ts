import { expect } from 'chai';
import { expectErrorBody, uid, useTenants, type EndpointRecord } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface Page {
  totalCount: number;
  totalPages: number;
  pageRequest: { page: number; size: number };
  items: EndpointRecord[];
}

const DAY = 86_400_000;
const ids = (items: { id: string }[]): string[] => items.map((i) => i.id).sort();

describe('endpoints (spec 4.5)', () => {
  let adminChild: Api;

  const w = useTenants();
  before(async () => {
    adminChild = w.t.world.as(await w.t.world.token('admin', w.childA));
  });

  const agentFor = async (e: EndpointRecord): Promise<Api> => w.t.world.as(await w.t.world.token('agent', e.orgId, e.id));
  const get = (id: string): Promise<EndpointRecord> => w.t.world.endpointRecord(id);

  describe('POST /endpoint', () => {
    it('creates an agent with a generated id, version 1, NEVER connected, server-owned fields stamped', async () => {
      const res = await w.adminA.post<EndpointRecord>('/endpoint', {
        orgId: w.orgA,
        displayName: 'web-01',
        clientVersion: 'v3.9.0',
        hostInfo: { hostName: 'web-01.example.com', uptime: 42, os: 'linux', platform: 'ubuntu' },
        lastIp: '203.0.113.7',
        internalIps: ['10.0.0.7', 'fe80::1'],
        certExpiry: '2030-01-01T00:00:00Z',
        latestConfig: true,
        externalStatus: 'ACTIVE',
        createdAt: '2001-01-01T00:00:00Z',
        version: 77,
        deleted: true,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const e = res.body;
      expect(e.id).to.match(/^[0-9a-f-]{36}$/);
      expect(e).to.include({
        orgId: w.orgA,
        type: 'VC_ENDPOINT',
        version: 1,
        connectionStatus: 'NEVER',
        deleted: false,
        displayName: 'web-01',
        lastIp: '203.0.113.7',
        certExpiry: '2030-01-01T00:00:00.000Z',
        externalStatus: 'ACTIVE',
      });
      expect(e.internalIps).to.deep.equal(['10.0.0.7', 'fe80::1']);
      expect(e.hostInfo).to.deep.equal({ hostName: 'web-01.example.com', uptime: 42, os: 'linux', platform: 'ubuntu' });
      expect(e.createdAt).to.not.equal('2001-01-01T00:00:00Z');
      expect(Date.now() - Date.parse(e.createdAt as string)).to.be.lessThan(60_000);
      expect(e.createdBy).to.have.property('username').that.is.a('string');
      expect(e).to.not.have.property('unknownField');
      expect(e).to.not.have.property('scanner');
      expect(await get(e.id)).to.deep.equal(e);
    });

    it('keeps a client id; the same id again is 409', async () => {
      const id = uid('ep');
      const e = await w.t.world.endpoint(w.orgA, { id });
      expect(e.id).to.equal(id);
      expectErrorBody(await w.adminA.post('/endpoint', { id, orgId: w.orgA }), 409, '/endpoint-control-service/v1/endpoint');
    });

    it("defaults orgId to the token's organization; an unrestricted token must name one (400)", async () => {
      const res = await adminChild.post<EndpointRecord>('/endpoint', { displayName: 'x' });
      expect(res.status).to.equal(200);
      expect(res.body.orgId).to.equal(w.childA);
      expectErrorBody(await w.t.admin.post('/endpoint', { displayName: 'x' }), 400);
    });

    it('answers 400 for bad enums, a family field out of range, bad addresses and bad field types', async () => {
      for (const body of [
        { orgId: w.orgA, type: 'VC_UTM', latitude: 200 },
        { orgId: w.orgA, type: 'NOPE' },
        { orgId: w.orgA, connectionStatus: 'ONLINE' },
        { orgId: w.orgA, externalStatus: 'SOMETIMES' },
        { orgId: w.orgA, lastIp: '999.1.1.1' },
        { orgId: w.orgA, internalIps: ['10.0.0.1', 'not-an-ip'] },
        { orgId: w.orgA, hostInfo: { uptime: 'long' } },
        { orgId: w.orgA, lastConnect: 'yesterday' },
        { orgId: w.orgA, latestConfig: 'maybe' },
      ]) {
        expectErrorBody(await w.adminA.post('/endpoint', body), 400);
      }
      const raw = await w.adminA.request('POST', '/endpoint', { raw: '{"orgId":', contentType: 'application/json' });
      expectErrorBody(raw, 400);
    });

    it('answers 401 without a token, 403 for a reader, an agent and an org outside the subtree', async () => {
      expectErrorBody(await w.t.anon.post('/endpoint', { orgId: w.orgA }), 401);
      expectErrorBody(await w.t.world.as('bogus').post('/endpoint', { orgId: w.orgA }), 401);
      expectErrorBody(await w.readerA.post('/endpoint', { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.post('/endpoint', { orgId: w.orgA }), 403);
      expectErrorBody(await adminChild.post('/endpoint', { orgId: w.orgA }), 403);
      const e = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await (await agentFor(e)).post('/endpoint', { orgId: w.orgA }), 403);
    });
  });

  describe('GET /endpoint/{id}', () => {
    it('returns any family in its own shape', async () => {
      const u = await w.t.world.utm(w.orgA, { model: 'MX64', wanStatus: 'WAN1', latitude: 45.5 });
      const l = await w.t.world.lte(w.orgA, { imei: uid('imei'), dataUsage: 12.5, site: { id: uid('site') } });
      const gu = await get(u.id);
      expect(gu).to.include({ type: 'EXTERNAL_UTM', serialId: u.serialId, model: 'MX64', wanStatus: 'WAN1', latitude: 45.5 });
      const gl = await get(l.id);
      expect(gl).to.include({ type: 'VC_LTE', dataUsage: 12.5 });
    });

    it('lets readers of the subtree and the endpoint’s own agent read; 403 elsewhere, 404 when unknown, 401 without token', async () => {
      const e = await w.t.world.endpoint(w.childA);
      expect((await w.readerA.get(`/endpoint/${e.id}`)).status).to.equal(200);
      expect((await adminChild.get(`/endpoint/${e.id}`)).status).to.equal(200);
      expect((await (await agentFor(e)).get(`/endpoint/${e.id}`)).status).to.equal(200);
      const other = await w.t.world.endpoint(w.childA);
      expectErrorBody(await (await agentFor(e)).get(`/endpoint/${other.id}`), 403);
      expectErrorBody(await w.adminB.get(`/endpoint/${e.id}`), 403);
      expectErrorBody(await w.t.anon.get(`/endpoint/${e.id}`), 401);
      expectErrorBody(await w.adminA.get(`/endpoint/${uid('missing')}`), 404);
    });
  });

  describe('PUT /endpoint/{id}', () => {
    it('replaces the record: absent fields removed, connectionStatus and created* kept, version incremented', async () => {
      const e = await w.t.world.endpoint(w.orgA, { displayName: 'old', clientVersion: 'v1', fimHoh: 'h1' });
      const res = await w.adminA.put<EndpointRecord>(`/endpoint/${e.id}`, { id: e.id, orgId: w.orgA, displayName: 'new', version: e.version });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id: e.id, displayName: 'new', version: e.version + 1, connectionStatus: 'NEVER', createdAt: e.createdAt });
      expect(res.body).to.not.have.property('clientVersion');
      expect(res.body).to.not.have.property('fimHoh');
      expect(await get(e.id)).to.deep.equal(res.body);
    });

    it('answers 409 for a stale version and accepts a write without one (last write wins)', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      expect((await w.adminA.put(`/endpoint/${e.id}`, { orgId: w.orgA, displayName: 'a', version: 1 })).status).to.equal(200);
      expectErrorBody(await w.adminA.put(`/endpoint/${e.id}`, { orgId: w.orgA, displayName: 'b', version: 1 }), 409);
      const ok = await w.adminA.put<EndpointRecord>(`/endpoint/${e.id}`, { orgId: w.orgA, displayName: 'c' });
      expect(ok.body).to.include({ displayName: 'c', version: 3 });
    });

    it('moves within the subtree only; 400 for a mismatching body id, 404 for a UTM id or an unknown id', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      const moved = await w.adminA.put<EndpointRecord>(`/endpoint/${e.id}`, { orgId: w.childA });
      expect(moved.body.orgId).to.equal(w.childA);
      expectErrorBody(await w.adminA.put(`/endpoint/${e.id}`, { orgId: w.orgB }), 403);
      expectErrorBody(await adminChild.put(`/endpoint/${e.id}`, { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminA.put(`/endpoint/${e.id}`, { id: 'other', orgId: w.orgA }), 400);
      const u = await w.t.world.utm(w.orgA);
      expectErrorBody(await w.adminA.put(`/endpoint/${u.id}`, { orgId: w.orgA }), 404);
      expectErrorBody(await w.adminA.put(`/endpoint/${uid('missing')}`, { orgId: w.orgA }), 404);
      expectErrorBody(await w.adminA.put(`/endpoint/${e.id}`, { orgId: w.childA, connectionStatus: 'BAD' }), 400);
    });

    it('answers 401 without token and 403 for readers, agents and other orgs', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.t.anon.put(`/endpoint/${e.id}`, { orgId: w.orgA }), 401);
      expectErrorBody(await w.readerA.put(`/endpoint/${e.id}`, { orgId: w.orgA }), 403);
      expectErrorBody(await (await agentFor(e)).put(`/endpoint/${e.id}`, { orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.put(`/endpoint/${e.id}`, { orgId: w.orgA }), 403);
    });
  });

  describe('DELETE /endpoint/{id}', () => {
    it('soft-deletes: 204, then 404 to every read and write, gone from searches, its agent tokens revoked', async () => {
      const e = await w.t.world.endpoint(w.orgA, { displayName: uid('doomed') });
      const agent = await agentFor(e);
      expect((await agent.post(`/endpoint/${e.id}/connect`)).status).to.equal(204);
      const del = await w.adminA.delete(`/endpoint/${e.id}`);
      expect(del.status).to.equal(204);
      expect(del.text).to.equal('');
      expectErrorBody(await w.adminA.get(`/endpoint/${e.id}`), 404);
      expectErrorBody(await w.adminA.put(`/endpoint/${e.id}`, { orgId: w.orgA }), 404);
      expectErrorBody(await w.adminA.delete(`/endpoint/${e.id}`), 404);
      for (const action of ['connect', 'disconnect', 'uninstall']) {
        expectErrorBody(await w.adminA.post(`/endpoint/${e.id}/${action}`), 404);
        expectErrorBody(await w.t.admin.post(`/endpoint/${e.id}/${action}`), 404);
      }
      expectErrorBody(await w.adminA.patch(`/endpoint/${e.id}/fim-hoh/abc`), 404);
      expectErrorBody(await agent.post(`/endpoint/${e.id}/connect`), 401);
      const page = await w.adminA.post<Page>('/endpoint/page-search', { criteria: { basic: e.displayName } });
      expect(page.body.totalCount).to.equal(0);
    });

    it('deletes any family (a UTM is then 404 on its own paths too)', async () => {
      const u = await w.t.world.utm(w.orgA);
      expect((await w.adminA.delete(`/endpoint/${u.id}`)).status).to.equal(204);
      expectErrorBody(await w.t.anon.get(`/utm-endpoint/${u.id}`), 404);
      expectErrorBody(await w.t.anon.get(`/utm-endpoint/serial/${String(u.serialId)}`), 404);
    });

    it('answers 401 without token, 403 for readers, agents and other orgs, 404 for unknown ids', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.t.anon.delete(`/endpoint/${e.id}`), 401);
      expectErrorBody(await w.readerA.delete(`/endpoint/${e.id}`), 403);
      expectErrorBody(await (await agentFor(e)).delete(`/endpoint/${e.id}`), 403);
      expectErrorBody(await w.adminB.delete(`/endpoint/${e.id}`), 403);
      expectErrorBody(await w.adminA.delete(`/endpoint/${uid('missing')}`), 404);
      expect((await get(e.id)).deleted).to.equal(false);
    });
  });

  describe('connection bookkeeping', () => {
    it('connect → CONNECTED + lastConnect, disconnect → DISCONNECTED + lastDisconnect, uninstall → UNINSTALLED, connect again → CONNECTED', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      const agent = await agentFor(e);
      const before = Date.now();
      const c = await agent.post(`/endpoint/${e.id}/connect`);
      expect(c.status).to.equal(204);
      expect(c.text).to.equal('');
      let r = await get(e.id);
      expect(r.connectionStatus).to.equal('CONNECTED');
      expect(Date.parse(r.lastConnect as string)).to.be.within(before - 1000, Date.now() + 1000);
      expect(r.version).to.equal(e.version + 1);
      expect(r.updatedAt).to.equal(e.updatedAt);

      expect((await agent.post(`/endpoint/${e.id}/disconnect`)).status).to.equal(204);
      r = await get(e.id);
      expect(r.connectionStatus).to.equal('DISCONNECTED');
      expect(Date.parse(r.lastDisconnect as string)).to.be.at.least(Date.parse(r.lastConnect as string));

      expect((await agent.post(`/endpoint/${e.id}/uninstall`)).status).to.equal(204);
      expect((await get(e.id)).connectionStatus).to.equal('UNINSTALLED');

      expect((await agent.post(`/endpoint/${e.id}/connect`)).status).to.equal(204);
      r = await get(e.id);
      expect(r.connectionStatus).to.equal('CONNECTED');
      expect(r.version).to.equal(e.version + 4);
    });

    it('works for admins of the subtree and system tokens; 403 for other orgs, other agents and readers', async () => {
      const e = await w.t.world.endpoint(w.childA);
      expect((await w.adminA.post(`/endpoint/${e.id}/disconnect`)).status).to.equal(204);
      expect((await get(e.id)).connectionStatus).to.equal('DISCONNECTED');
      expect((await w.t.admin.post(`/endpoint/${e.id}/connect`)).status).to.equal(204);
      expect((await get(e.id)).connectionStatus).to.equal('CONNECTED');
      const other = await w.t.world.endpoint(w.childA);
      for (const action of ['connect', 'disconnect', 'uninstall']) {
        expectErrorBody(await w.adminB.post(`/endpoint/${e.id}/${action}`), 403);
        expectErrorBody(await w.readerA.post(`/endpoint/${e.id}/${action}`), 403);
        expectErrorBody(await (await agentFor(other)).post(`/endpoint/${e.id}/${action}`), 403);
        expectErrorBody(await w.t.anon.post(`/endpoint/${e.id}/${action}`), 401);
      }
      expect((await get(e.id)).connectionStatus).to.equal('CONNECTED');
    });

    it('answers 404 for an unknown endpoint on connect, disconnect and uninstall, whoever asks', async () => {
      const missing = uid('missing');
      const agent = w.t.world.as(await w.t.world.token('agent', w.orgA, missing));
      for (const action of ['connect', 'disconnect', 'uninstall']) {
        expectErrorBody(await agent.post(`/endpoint/${missing}/${action}`), 404, `/endpoint-control-service/v1/endpoint/${missing}/${action}`);
        expectErrorBody(await w.adminA.post(`/endpoint/${missing}/${action}`), 404);
        expectErrorBody(await w.t.admin.post(`/endpoint/${missing}/${action}`), 404);
      }
    });
  });

  describe('PATCH /endpoint/{id}/fim-hoh/{hoh}', () => {
    it('records the hash for the agent itself and admins; 403/401/404 otherwise', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      expect((await (await agentFor(e)).patch(`/endpoint/${e.id}/fim-hoh/abc123`)).status).to.equal(204);
      expect((await get(e.id)).fimHoh).to.equal('abc123');
      expect((await w.adminA.patch(`/endpoint/${e.id}/fim-hoh/def456`)).status).to.equal(204);
      expect((await get(e.id)).fimHoh).to.equal('def456');
      expectErrorBody(await w.readerA.patch(`/endpoint/${e.id}/fim-hoh/x`), 403);
      expectErrorBody(await w.adminB.patch(`/endpoint/${e.id}/fim-hoh/x`), 403);
      expectErrorBody(await w.t.anon.patch(`/endpoint/${e.id}/fim-hoh/x`), 401);
      expectErrorBody(await w.adminA.patch(`/endpoint/${uid('missing')}/fim-hoh/x`), 404);
    });
  });

  describe('PATCH /endpoint/{id}/internal-ips/{internal-ips}/external-ip/{external-ip}', () => {
    const path = (id: string, internal: string, external: string): string => `/endpoint/${id}/internal-ips/${internal}/external-ip/${external}`;

    it('sets internalIps from the comma-separated list and lastIp', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      const res = await (await agentFor(e)).patch(path(e.id, '10.0.0.5,192.168.1.9', '198.51.100.4'));
      expect(res.status).to.equal(204);
      const r = await get(e.id);
      expect(r.internalIps).to.deep.equal(['10.0.0.5', '192.168.1.9']);
      expect(r.lastIp).to.equal('198.51.100.4');
      expect((await w.adminA.patch(path(e.id, 'fd00::5', '2001:db8::1'))).status).to.equal(204);
      expect((await get(e.id)).internalIps).to.deep.equal(['fd00::5']);
      const found = await w.adminA.post<Page>('/endpoint/page-search', { criteria: { basic: '2001:db8::1', orgId: w.orgA } });
      expect(found.body.items.map((i) => i.id)).to.deep.equal([e.id]);
    });

    it('answers 400 for bad IP syntax in either list', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.adminA.patch(path(e.id, '10.0.0.5,10.0.0.300', '198.51.100.4')), 400);
      expectErrorBody(await w.adminA.patch(path(e.id, '10.0.0.5', 'example.com')), 400);
      expectErrorBody(await w.adminA.patch(path(e.id, ',', '198.51.100.4')), 400);
      expect(await get(e.id)).to.not.have.property('lastIp');
    });

    it('answers 409 for an UNINSTALLED or deleted endpoint, 404 for an unknown one', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      await w.t.admin.post(`/endpoint/${e.id}/uninstall`);
      expectErrorBody(await w.adminA.patch(path(e.id, '10.0.0.5', '198.51.100.4')), 409);
      const d = await w.t.world.endpoint(w.orgA);
      await w.adminA.delete(`/endpoint/${d.id}`);
      expectErrorBody(await w.adminA.patch(path(d.id, '10.0.0.5', '198.51.100.4')), 409);
      expectErrorBody(await w.adminA.patch(path(uid('missing'), '10.0.0.5', '198.51.100.4')), 404);
    });

    it('answers 401 without token and 403 for readers, other agents and other orgs', async () => {
      const e = await w.t.world.endpoint(w.orgA);
      const other = await w.t.world.endpoint(w.orgA);
      expectErrorBody(await w.t.anon.patch(path(e.id, '10.0.0.5', '198.51.100.4')), 401);
      expectErrorBody(await w.readerA.patch(path(e.id, '10.0.0.5', '198.51.100.4')), 403);
      expectErrorBody(await w.adminB.patch(path(e.id, '10.0.0.5', '198.51.100.4')), 403);
      expectErrorBody(await (await agentFor(other)).patch(path(e.id, '10.0.0.5', '198.51.100.4')), 403);
    });
  });

  describe('POST /endpoint/page-search', () => {
    let org: string;
    let admin: Api;
    const made: Record<string, EndpointRecord> = {};

    before(async () => {
      org = await w.t.world.org();
      admin = w.t.world.as(await w.t.world.token('admin', org));
      const recent = new Date(Date.now() - 2 * DAY).toISOString();
      const old = new Date(Date.now() - 40 * DAY).toISOString();
      made.web = await w.t.world.endpoint(org, {
        displayName: 'Web Server One',
        hostInfo: { hostName: 'web-srv-01.corp.example' },
        lastIp: '203.0.113.10',
        internalIps: ['10.1.2.3'],
        clientVersion: 'v3.9.2',
        lastConnect: recent,
        connectionStatus: 'DISCONNECTED',
      });
      made.db = await w.t.world.endpoint(org, {
        displayName: 'Database',
        hostInfo: { hostName: 'db-01.corp.example' },
        lastIp: '198.51.100.20',
        internalIps: ['10.9.8.7'],
        clientVersion: 'v3.10.0',
        lastConnect: old,
        connectionStatus: 'DISCONNECTED',
      });
      made.scanner = await w.t.world.endpoint(org, {
        displayName: 'Network Scanner',
        certSubject: 'CN=scan-01, OU=Scanner, O=Example',
        lastConnect: recent,
      });
      made.never = await w.t.world.endpoint(org, { displayName: 'Fresh Install' });
      made.longLived = await w.t.world.endpoint(org, { displayName: 'Long Lived', lastConnect: old, connectionStatus: 'CONNECTED' });
      await w.t.world.utm(org, { displayName: 'Web Firewall' });
      await w.t.world.endpoint(w.orgB, { displayName: 'Web Server Other Org' });
    });

    const search = async (criteria: Record<string, unknown>, pageRequest?: Record<string, unknown>): Promise<Page> => {
      const res = await admin.post<Page>('/endpoint/page-search', { criteria, ...(pageRequest ? { pageRequest } : {}) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };

    it('with empty criteria returns only agents of the caller’s subtree', async () => {
      const page = await search({});
      expect(ids(page.items)).to.deep.equal(ids(Object.values(made)));
      expect(page.totalCount).to.equal(5);
      expect(page.items.every((i) => i.type === 'VC_ENDPOINT')).to.equal(true);
      const empty = await admin.post<Page>('/endpoint/page-search', {});
      expect(empty.body.totalCount).to.equal(5);
    });

    it('basic matches displayName, host name, lastIp, internalIps and clientVersion, case-insensitively and by prefix, all words', async () => {
      expect(ids((await search({ basic: 'web' })).items)).to.deep.equal([made.web.id]);
      expect(ids((await search({ basic: 'WEB-SRV' })).items)).to.deep.equal([made.web.id]);
      expect(ids((await search({ basic: 'corp.exam' })).items)).to.deep.equal(ids([made.web, made.db]));
      expect(ids((await search({ basic: '198.51.100.20' })).items)).to.deep.equal([made.db.id]);
      expect(ids((await search({ basic: '10.1.2' })).items)).to.deep.equal([made.web.id]);
      expect(ids((await search({ basic: 'v3.10' })).items)).to.deep.equal([made.db.id]);
      expect(ids((await search({ basic: 'server one' })).items)).to.deep.equal([made.web.id]);
      expect((await search({ basic: 'server database' })).totalCount).to.equal(0);
    });

    it('includeScannerEndpoints: false hides endpoints whose certificate subject has OU=scanner', async () => {
      expect(ids((await search({ includeScannerEndpoints: true })).items)).to.include(made.scanner.id);
      const page = await search({ includeScannerEndpoints: false });
      expect(ids(page.items)).to.not.include(made.scanner.id);
      expect(page.totalCount).to.equal(4);
    });

    it('showInactiveEndpoints: false hides endpoints last connected more than N days ago and never-connected ones, not CONNECTED ones', async () => {
      const page = await search({ showInactiveEndpoints: false, hideInactiveAfterDays: 7 });
      expect(ids(page.items)).to.deep.equal(ids([made.web, made.scanner, made.longLived]));
      const wide = await search({ showInactiveEndpoints: false, hideInactiveAfterDays: 60 });
      expect(ids(wide.items)).to.deep.equal(ids([made.web, made.db, made.scanner, made.longLived]));
      expect((await search({ showInactiveEndpoints: true, hideInactiveAfterDays: 7 })).totalCount).to.equal(5);
    });

    it('orgId narrows to that organization; one outside the subtree is 403', async () => {
      const child = await w.t.world.org(org);
      const inChild = await w.t.world.endpoint(child);
      expect(ids((await search({ orgId: child })).items)).to.deep.equal([inChild.id]);
      expect((await search({ orgId: org })).totalCount).to.equal(5);
      expectErrorBody(await admin.post('/endpoint/page-search', { criteria: { orgId: w.orgB } }), 403);
      await w.t.admin.delete(`/endpoint/${inChild.id}`);
    });

    it('pages and sorts; totalPages follows the page size', async () => {
      const p0 = await search({}, { page: 0, size: 2, sort: [{ field: 'displayName', direction: 'ASC' }] });
      expect(p0.totalCount).to.equal(5);
      expect(p0.totalPages).to.equal(3);
      expect(p0.items.map((i) => i.displayName)).to.deep.equal(['Database', 'Fresh Install']);
      const p2 = await search({}, { page: 2, size: 2, sort: [{ field: 'displayName', direction: 'ASC' }] });
      expect(p2.items.map((i) => i.displayName)).to.deep.equal(['Web Server One']);
      expect(p2.pageRequest).to.deep.include({ page: 2, size: 2 });
    });

    it('answers 400 for bad criteria and sorts, 401 without token, 403 for agents', async () => {
      for (const body of [
        { criteria: { hideInactiveAfterDays: -1 } },
        { criteria: { showInactiveEndpoints: 'no' } },
        { criteria: 'x' },
        { pageRequest: { size: 0 } },
        { pageRequest: { sort: [{ field: 'secret' }] } },
      ]) {
        expectErrorBody(await admin.post('/endpoint/page-search', body), 400);
      }
      expectErrorBody(await w.t.anon.post('/endpoint/page-search', {}), 401);
      expectErrorBody(await (await agentFor(made.web)).post('/endpoint/page-search', {}), 403);
    });
  });

  describe('POST and PUT /endpoint are polymorphic on type (spec 2.2 discriminator)', () => {
    it('creates and replaces a UTM or an LTE record in its own shape; no type means VC_ENDPOINT', async () => {
      const utm = await w.adminA.post<EndpointRecord>('/endpoint', { orgId: w.orgA, type: 'EXTERNAL_UTM', serialId: uid('SN'), model: 'MX67' });
      expect(utm.status, JSON.stringify(utm.body)).to.equal(200);
      expect(utm.body).to.include({ type: 'EXTERNAL_UTM', model: 'MX67' });
      expect((await w.adminA.get<EndpointRecord>(`/utm-endpoint/${utm.body.id}`)).status).to.equal(200);

      const lte = await w.adminA.post<EndpointRecord>('/endpoint', { orgId: w.orgA, type: 'VC_LTE', imei: '356938035643809', site: { id: 's1' }, dataUsage: 1.5 });
      expect(lte.status, JSON.stringify(lte.body)).to.equal(200);
      expect(lte.body).to.include({ type: 'VC_LTE', imei: '356938035643809', dataUsage: 1.5 });

      const agent = await w.adminA.post<EndpointRecord>('/endpoint', { orgId: w.orgA, displayName: 'plain' });
      expect(agent.body).to.include({ type: 'VC_ENDPOINT' });
      // An agent body does not carry UTM fields: they are not part of its shape, so they are refused by name, as any unknown field is.
      const refused = await w.adminA.post('/endpoint', { orgId: w.orgA, model: 'MX67', unknownField: 'x' });
      expect(refused.status, refused.text).to.equal(400);
      expect((refused.body as { message: string }).message).to.contain('body.model is not allowed').and.contain('body.unknownField is not allowed');

      const put = await w.adminA.put<EndpointRecord>(`/endpoint/${utm.body.id}`, { orgId: w.orgA, type: 'EXTERNAL_UTM', serialId: utm.body.serialId, model: 'MX68', version: utm.body.version });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.include({ model: 'MX68', version: utm.body.version + 1 });
      // A UTM body cannot replace an agent record: the id is not a UTM.
      expectErrorBody(await w.adminA.put(`/endpoint/${agent.body.id}`, { orgId: w.orgA, type: 'EXTERNAL_UTM', serialId: uid('SN') }), 404);
      expectErrorBody(await w.adminA.post('/endpoint', { orgId: w.orgA, type: 'VC_ROUTER' }), 400);
    });
  });
});
