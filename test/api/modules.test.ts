import { expect } from 'chai';
import { startTestApp, expectErrorBody, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface EnabledModules extends Record<string, unknown> {
  id: string;
  orgId: string;
  version: number;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** Registers an agent endpoint of the org through the endpoints API. */
async function endpointOf(t: TestApp, orgId: string): Promise<string> {
  return (await t.world.endpoint(orgId)).id;
}

describe('enabled modules (spec 4.6)', () => {
  let t: TestApp;
  let orgA: string;
  let childA: string;
  let orgB: string;
  let adminA: Api;
  let readerA: Api;
  let adminB: Api;

  before(async () => {
    t = await startTestApp();
    ({ orgA, childA, orgB, adminA, readerA, adminB } = await t.world.tenants());
  });
  after(() => t.close());

  describe('per endpoint', () => {
    it('GET of a record never written is 404; POST creates it with version 1 and string createdBy', async () => {
      const ep = await endpointOf(t, childA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expectErrorBody(await adminA.get(path), 404, `/endpoint-control-service/v1${path}`);
      const res = await adminA.post<EnabledModules>(path, { fim: 'ACTIVE', antivirus: 'PENDING', mdr: 'INACTIVE' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id: ep, orgId: childA, fim: 'ACTIVE', antivirus: 'PENDING', mdr: 'INACTIVE', version: 1 });
      expect(res.body.createdBy).to.be.a('string').and.equal(res.body.updatedBy);
      expect(Date.parse(res.body.createdAt)).to.be.closeTo(Date.now(), 60_000);
      expect(res.body).to.not.have.any.keys('wel', 'cmd', 'pan', 'scope', 'subscribedBundles');
      const got = await readerA.get<EnabledModules>(path);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
    });

    it('POST on an existing record is 409 and leaves it unchanged', async () => {
      const ep = await endpointOf(t, orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expect((await adminA.post(path, { fim: 'ACTIVE' })).status).to.equal(200);
      expectErrorBody(await adminA.post(path, { fim: 'INACTIVE' }), 409);
      expect((await adminA.get<EnabledModules>(path)).body.fim).to.equal('ACTIVE');
    });

    it('PUT replaces the module fields, bumps the version, keeps createdAt; a stale version is 409', async () => {
      const ep = await endpointOf(t, orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      const first = (await adminA.post<EnabledModules>(path, { fim: 'ACTIVE', wel: 'PENDING' })).body;
      const put = await adminA.put<EnabledModules>(path, { ...first, wel: undefined, vuln: 'ACTIVE', version: 1 });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.include({ fim: 'ACTIVE', vuln: 'ACTIVE', version: 2, createdAt: first.createdAt });
      expect(put.body).to.not.have.property('wel');
      expectErrorBody(await adminA.put(path, { fim: 'INACTIVE', version: 1 }), 409);
      const noVersion = await adminA.put<EnabledModules>(path, { fim: 'INACTIVE' });
      expect(noVersion.body).to.include({ fim: 'INACTIVE', version: 3 });
      expect(noVersion.body).to.not.have.property('vuln');
    });

    it('PUT of a record never written is 404', async () => {
      const ep = await endpointOf(t, orgA);
      expectErrorBody(await adminA.put(`/endpoint/${ep}/enabled-modules`, { fim: 'ACTIVE' }), 404);
    });

    it('refuses values outside DynamicModuleStatus, a missing body and a mismatching id with 400', async () => {
      const ep = await endpointOf(t, orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      for (const bad of [{ fim: 'ENABLED' }, { antivirus: 'active' }, { pan: true }, { mdr: null }]) {
        const res = await adminA.post<{ message: string }>(path, bad);
        expectErrorBody(res, 400);
        expect(res.body.message).to.contain(Object.keys(bad)[0]);
      }
      expectErrorBody(await adminA.post(path), 400);
      expectErrorBody(await adminA.post(path, { id: 'another-endpoint', fim: 'ACTIVE' }), 400);
      expectErrorBody(await adminA.post(path, { orgId: orgB, fim: 'ACTIVE' }), 400);
      expectErrorBody(await adminA.get(path), 404);
    });

    it('an unknown endpoint is 404; no token 401; a reader may not write; another org is 403', async () => {
      expectErrorBody(await adminA.get(`/endpoint/${uid('nope')}/enabled-modules`), 404);
      const ep = await endpointOf(t, orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expectErrorBody(await t.anon.get(path), 401);
      expectErrorBody(await readerA.post(path, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await adminB.post(path, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await adminB.get(path), 403);
      expectErrorBody(await adminA.get(path), 404);
    });

    it("an agent reads its own endpoint's modules but not another endpoint's", async () => {
      const ep = await endpointOf(t, orgA);
      const other = await endpointOf(t, orgA);
      await adminA.post(`/endpoint/${ep}/enabled-modules`, { cmd: 'ACTIVE' });
      await adminA.post(`/endpoint/${other}/enabled-modules`, { cmd: 'ACTIVE' });
      const agent = t.world.as(await t.world.token('agent', orgA, ep));
      expect((await agent.get<EnabledModules>(`/endpoint/${ep}/enabled-modules`)).body.cmd).to.equal('ACTIVE');
      expectErrorBody(await agent.get(`/endpoint/${other}/enabled-modules`), 403);
      expectErrorBody(await agent.put(`/endpoint/${ep}/enabled-modules`, { cmd: 'INACTIVE' }), 403);
    });
  });

  describe('per organization', () => {
    it('GET never written is 404; POST creates; a parent admin reaches a child org; 409 on a second POST', async () => {
      const org = await t.world.org(orgA);
      const path = `/org/${org}/enabled-modules`;
      expectErrorBody(await adminA.get(path), 404);
      const res = await adminA.post<EnabledModules>(path, { pan: 'ACTIVE', dnsFilter: 'PENDING' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: org, orgId: org, pan: 'ACTIVE', dnsFilter: 'PENDING', version: 1 });
      expectErrorBody(await adminA.post(path, { pan: 'ACTIVE' }), 409);
      expect((await readerA.get<EnabledModules>(path)).body).to.deep.equal(res.body);
    });

    it('PUT replaces with an integer version: stale → 409, current → 200', async () => {
      const org = await t.world.org(orgA);
      const path = `/org/${org}/enabled-modules`;
      await adminA.post(path, { fim: 'PENDING' });
      const ok = await adminA.put<EnabledModules>(path, { fim: 'ACTIVE', version: 1 });
      expect(ok.body).to.include({ fim: 'ACTIVE', version: 2 });
      expectErrorBody(await adminA.put(path, { fim: 'INACTIVE', version: 1 }), 409);
      expectErrorBody(await adminA.put(path, { fim: 'INACTIVE', version: 'two' }), 400);
      expect((await adminA.get<EnabledModules>(path)).body).to.include({ fim: 'ACTIVE', version: 2 });
    });

    it('an unregistered organization is 404 for the system role and 403 for a scoped token; a sibling org is 403', async () => {
      const ghost = uid('ghost');
      expectErrorBody(await t.admin.post(`/org/${ghost}/enabled-modules`, { fim: 'ACTIVE' }), 404);
      expectErrorBody(await adminA.post(`/org/${ghost}/enabled-modules`, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await adminB.get(`/org/${orgA}/enabled-modules`), 403);
      expectErrorBody(await adminB.post(`/org/${childA}/enabled-modules`, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await readerA.put(`/org/${orgA}/enabled-modules`, { fim: 'ACTIVE' }), 403);
    });

    it('installcomplete turns PENDING modules ACTIVE (204) and leaves the others', async () => {
      const org = await t.world.org(orgA);
      const path = `/org/${org}/enabled-modules`;
      await adminA.post(path, { fim: 'PENDING', wel: 'PENDING', pan: 'INACTIVE', antivirus: 'ACTIVE' });
      const res = await adminA.post(`${path}/installcomplete`);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      const after = (await adminA.get<EnabledModules>(path)).body;
      expect(after).to.include({ fim: 'ACTIVE', wel: 'ACTIVE', pan: 'INACTIVE', antivirus: 'ACTIVE', version: 2 });
      expect(after.updatedBy).to.be.a('string');
      // Nothing pending any more: confirming again changes nothing.
      expect((await adminA.post(`${path}/installcomplete`)).status).to.equal(204);
      expect((await adminA.get<EnabledModules>(path)).body.version).to.equal(2);
    });

    it('installcomplete: 404 without a record, 403 for a reader and for another org', async () => {
      const org = await t.world.org(orgA);
      expectErrorBody(await adminA.post(`/org/${org}/enabled-modules/installcomplete`), 404);
      await adminA.post(`/org/${org}/enabled-modules`, { fim: 'PENDING' });
      expectErrorBody(await readerA.post(`/org/${org}/enabled-modules/installcomplete`), 403);
      expectErrorBody(await adminB.post(`/org/${org}/enabled-modules/installcomplete`), 403);
      expect((await adminA.get<EnabledModules>(`/org/${org}/enabled-modules`)).body.fim).to.equal('PENDING');
    });
  });

  describe('GET /ui/org/modules', () => {
    it("answers OrgEnabledModules of the token's own organization from ACTIVE modules only", async () => {
      const org = await t.world.org();
      await t.admin.post(`/org/${org}/enabled-modules`, { antivirus: 'ACTIVE', fim: 'PENDING', pan: 'ACTIVE', wel: 'INACTIVE' });
      const reader = t.world.as(await t.world.token('reader', org));
      const res = await reader.get('/ui/org/modules');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ avEnabled: true, fimEnabled: false, panEnabled: true, windowsEventLogEnabled: false });
      await t.admin.put(`/org/${org}/enabled-modules`, { fim: 'ACTIVE', wel: 'ACTIVE' });
      expect((await reader.get('/ui/org/modules')).body).to.deep.equal({
        avEnabled: false,
        fimEnabled: true,
        panEnabled: false,
        windowsEventLogEnabled: true,
      });
    });

    it('is all false for an organization without a record; 401 without a token; 403 for a token without an org', async () => {
      const org = await t.world.org();
      const reader = t.world.as(await t.world.token('reader', org));
      expect((await reader.get('/ui/org/modules')).body).to.deep.equal({
        avEnabled: false,
        fimEnabled: false,
        panEnabled: false,
        windowsEventLogEnabled: false,
      });
      expectErrorBody(await t.anon.get('/ui/org/modules'), 401);
      expectErrorBody(await t.admin.get('/ui/org/modules'), 403);
    });
  });

  describe('effectiveModuleStatus (used by commands)', () => {
    it("answers the endpoint's own field, else the organization's, else undefined", async () => {
      const org = await t.world.org();
      const ep = await endpointOf(t, org);
      const svc = t.server.handle.services.modules;
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal(undefined);
      await t.admin.post(`/org/${org}/enabled-modules`, { cmd: 'ACTIVE', fim: 'PENDING' });
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal('ACTIVE');
      await t.admin.post(`/endpoint/${ep}/enabled-modules`, { cmd: 'INACTIVE' });
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal('INACTIVE');
      expect(await svc.effectiveModuleStatus(ep, org, 'fim')).to.equal('PENDING');
      expect(await svc.effectiveModuleStatus(ep, org, 'mdr')).to.equal(undefined);
    });
  });
});
