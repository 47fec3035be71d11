import { expect } from 'chai';
import { expectErrorBody, uid, useTenants, type TestApp } from '../helpers/app.js';


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

  const w = useTenants();

  describe('per endpoint', () => {
    it('GET of a record never written is 404; POST creates it with version 1 and string createdBy', async () => {
      const ep = await endpointOf(w.t, w.childA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expectErrorBody(await w.adminA.get(path), 404, `/endpoint-control-service/v1${path}`);
      const res = await w.adminA.post<EnabledModules>(path, { fim: 'ACTIVE', antivirus: 'PENDING', mdr: 'INACTIVE' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id: ep, orgId: w.childA, fim: 'ACTIVE', antivirus: 'PENDING', mdr: 'INACTIVE', version: 1 });
      expect(res.body.createdBy).to.be.a('string').and.equal(res.body.updatedBy);
      expect(Date.parse(res.body.createdAt)).to.be.closeTo(Date.now(), 60_000);
      expect(res.body).to.not.have.any.keys('wel', 'cmd', 'pan', 'scope', 'subscribedBundles');
      const got = await w.readerA.get<EnabledModules>(path);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
    });

    it('POST on an existing record is 409 and leaves it unchanged', async () => {
      const ep = await endpointOf(w.t, w.orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expect((await w.adminA.post(path, { fim: 'ACTIVE' })).status).to.equal(200);
      expectErrorBody(await w.adminA.post(path, { fim: 'INACTIVE' }), 409);
      expect((await w.adminA.get<EnabledModules>(path)).body.fim).to.equal('ACTIVE');
    });

    it('PUT replaces the module fields, bumps the version, keeps createdAt; a stale version is 409', async () => {
      const ep = await endpointOf(w.t, w.orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      const first = (await w.adminA.post<EnabledModules>(path, { fim: 'ACTIVE', wel: 'PENDING' })).body;
      const put = await w.adminA.put<EnabledModules>(path, { ...first, wel: undefined, vuln: 'ACTIVE', version: 1 });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.include({ fim: 'ACTIVE', vuln: 'ACTIVE', version: 2, createdAt: first.createdAt });
      expect(put.body).to.not.have.property('wel');
      expectErrorBody(await w.adminA.put(path, { fim: 'INACTIVE', version: 1 }), 409);
      const noVersion = await w.adminA.put<EnabledModules>(path, { fim: 'INACTIVE' });
      expect(noVersion.body).to.include({ fim: 'INACTIVE', version: 3 });
      expect(noVersion.body).to.not.have.property('vuln');
    });

    it('PUT of a record never written is 404', async () => {
      const ep = await endpointOf(w.t, w.orgA);
      expectErrorBody(await w.adminA.put(`/endpoint/${ep}/enabled-modules`, { fim: 'ACTIVE' }), 404);
    });

    it('refuses values outside DynamicModuleStatus, a missing body and a mismatching id with 400', async () => {
      const ep = await endpointOf(w.t, w.orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      for (const bad of [{ fim: 'ENABLED' }, { antivirus: 'active' }, { pan: true }, { mdr: null }]) {
        const res = await w.adminA.post<{ message: string }>(path, bad);
        expectErrorBody(res, 400);
        expect(res.body.message).to.contain(Object.keys(bad)[0]);
      }
      expectErrorBody(await w.adminA.post(path), 400);
      expectErrorBody(await w.adminA.post(path, { id: 'another-endpoint', fim: 'ACTIVE' }), 400);
      expectErrorBody(await w.adminA.post(path, { orgId: w.orgB, fim: 'ACTIVE' }), 400);
      expectErrorBody(await w.adminA.get(path), 404);
    });

    it('an unknown endpoint is 404; no token 401; a reader may not write; another org is 403', async () => {
      expectErrorBody(await w.adminA.get(`/endpoint/${uid('nope')}/enabled-modules`), 404);
      const ep = await endpointOf(w.t, w.orgA);
      const path = `/endpoint/${ep}/enabled-modules`;
      expectErrorBody(await w.t.anon.get(path), 401);
      expectErrorBody(await w.readerA.post(path, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await w.adminB.post(path, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await w.adminB.get(path), 403);
      expectErrorBody(await w.adminA.get(path), 404);
    });

    it("an agent reads its own endpoint's modules but not another endpoint's", async () => {
      const ep = await endpointOf(w.t, w.orgA);
      const other = await endpointOf(w.t, w.orgA);
      await w.adminA.post(`/endpoint/${ep}/enabled-modules`, { cmd: 'ACTIVE' });
      await w.adminA.post(`/endpoint/${other}/enabled-modules`, { cmd: 'ACTIVE' });
      const agent = w.t.world.as(await w.t.world.token('agent', w.orgA, ep));
      expect((await agent.get<EnabledModules>(`/endpoint/${ep}/enabled-modules`)).body.cmd).to.equal('ACTIVE');
      expectErrorBody(await agent.get(`/endpoint/${other}/enabled-modules`), 403);
      expectErrorBody(await agent.put(`/endpoint/${ep}/enabled-modules`, { cmd: 'INACTIVE' }), 403);
    });
  });

  describe('per organization', () => {
    it('GET never written is 404; POST creates; a parent admin reaches a child org; 409 on a second POST', async () => {
      const org = await w.t.world.org(w.orgA);
      const path = `/org/${org}/enabled-modules`;
      expectErrorBody(await w.adminA.get(path), 404);
      const res = await w.adminA.post<EnabledModules>(path, { pan: 'ACTIVE', dnsFilter: 'PENDING' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: org, orgId: org, pan: 'ACTIVE', dnsFilter: 'PENDING', version: 1 });
      expectErrorBody(await w.adminA.post(path, { pan: 'ACTIVE' }), 409);
      expect((await w.readerA.get<EnabledModules>(path)).body).to.deep.equal(res.body);
    });

    it('PUT replaces with an integer version: stale → 409, current → 200', async () => {
      const org = await w.t.world.org(w.orgA);
      const path = `/org/${org}/enabled-modules`;
      await w.adminA.post(path, { fim: 'PENDING' });
      const ok = await w.adminA.put<EnabledModules>(path, { fim: 'ACTIVE', version: 1 });
      expect(ok.body).to.include({ fim: 'ACTIVE', version: 2 });
      expectErrorBody(await w.adminA.put(path, { fim: 'INACTIVE', version: 1 }), 409);
      expectErrorBody(await w.adminA.put(path, { fim: 'INACTIVE', version: 'two' }), 400);
      expect((await w.adminA.get<EnabledModules>(path)).body).to.include({ fim: 'ACTIVE', version: 2 });
    });

    it('an unregistered organization is 404 for the system role and 403 for a scoped token; a sibling org is 403', async () => {
      const ghost = uid('ghost');
      expectErrorBody(await w.t.admin.post(`/org/${ghost}/enabled-modules`, { fim: 'ACTIVE' }), 404);
      expectErrorBody(await w.adminA.post(`/org/${ghost}/enabled-modules`, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await w.adminB.get(`/org/${w.orgA}/enabled-modules`), 403);
      expectErrorBody(await w.adminB.post(`/org/${w.childA}/enabled-modules`, { fim: 'ACTIVE' }), 403);
      expectErrorBody(await w.readerA.put(`/org/${w.orgA}/enabled-modules`, { fim: 'ACTIVE' }), 403);
    });

    it('installcomplete turns PENDING modules ACTIVE (204) and leaves the others', async () => {
      const org = await w.t.world.org(w.orgA);
      const path = `/org/${org}/enabled-modules`;
      await w.adminA.post(path, { fim: 'PENDING', wel: 'PENDING', pan: 'INACTIVE', antivirus: 'ACTIVE' });
      const res = await w.adminA.post(`${path}/installcomplete`);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      const after = (await w.adminA.get<EnabledModules>(path)).body;
      expect(after).to.include({ fim: 'ACTIVE', wel: 'ACTIVE', pan: 'INACTIVE', antivirus: 'ACTIVE', version: 2 });
      expect(after.updatedBy).to.be.a('string');
      // Nothing pending any more: confirming again changes nothing.
      expect((await w.adminA.post(`${path}/installcomplete`)).status).to.equal(204);
      expect((await w.adminA.get<EnabledModules>(path)).body.version).to.equal(2);
    });

    it('installcomplete: 404 without a record, 403 for a reader and for another org', async () => {
      const org = await w.t.world.org(w.orgA);
      expectErrorBody(await w.adminA.post(`/org/${org}/enabled-modules/installcomplete`), 404);
      await w.adminA.post(`/org/${org}/enabled-modules`, { fim: 'PENDING' });
      expectErrorBody(await w.readerA.post(`/org/${org}/enabled-modules/installcomplete`), 403);
      expectErrorBody(await w.adminB.post(`/org/${org}/enabled-modules/installcomplete`), 403);
      expect((await w.adminA.get<EnabledModules>(`/org/${org}/enabled-modules`)).body.fim).to.equal('PENDING');
    });
  });

  describe('GET /ui/org/modules', () => {
    it("answers OrgEnabledModules of the token's own organization from ACTIVE modules only", async () => {
      const org = await w.t.world.org();
      await w.t.admin.post(`/org/${org}/enabled-modules`, { antivirus: 'ACTIVE', fim: 'PENDING', pan: 'ACTIVE', wel: 'INACTIVE' });
      const reader = w.t.world.as(await w.t.world.token('reader', org));
      const res = await reader.get('/ui/org/modules');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ avEnabled: true, fimEnabled: false, panEnabled: true, windowsEventLogEnabled: false });
      await w.t.admin.put(`/org/${org}/enabled-modules`, { fim: 'ACTIVE', wel: 'ACTIVE' });
      expect((await reader.get('/ui/org/modules')).body).to.deep.equal({
        avEnabled: false,
        fimEnabled: true,
        panEnabled: false,
        windowsEventLogEnabled: true,
      });
    });

    it('is all false for an organization without a record; 401 without a token; 403 for a token without an org', async () => {
      const org = await w.t.world.org();
      const reader = w.t.world.as(await w.t.world.token('reader', org));
      expect((await reader.get('/ui/org/modules')).body).to.deep.equal({
        avEnabled: false,
        fimEnabled: false,
        panEnabled: false,
        windowsEventLogEnabled: false,
      });
      expectErrorBody(await w.t.anon.get('/ui/org/modules'), 401);
      expectErrorBody(await w.t.admin.get('/ui/org/modules'), 403);
    });
  });

  describe('effectiveModuleStatus (used by commands)', () => {
    it("answers the endpoint's own field, else the organization's, else undefined", async () => {
      const org = await w.t.world.org();
      const ep = await endpointOf(w.t, org);
      const svc = w.t.server.handle.services.modules;
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal(undefined);
      await w.t.admin.post(`/org/${org}/enabled-modules`, { cmd: 'ACTIVE', fim: 'PENDING' });
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal('ACTIVE');
      await w.t.admin.post(`/endpoint/${ep}/enabled-modules`, { cmd: 'INACTIVE' });
      expect(await svc.effectiveModuleStatus(ep, org, 'cmd')).to.equal('INACTIVE');
      expect(await svc.effectiveModuleStatus(ep, org, 'fim')).to.equal('PENDING');
      expect(await svc.effectiveModuleStatus(ep, org, 'mdr')).to.equal(undefined);
    });
  });
});
