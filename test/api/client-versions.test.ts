import { expect } from 'chai';
import { startTestApp, expectErrorBody, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface Versions {
  linux: string;
  mac: string;
  windows: string;
}
interface OrgTargetVersion extends Versions {
  orgId: string;
}

describe('client versions (spec 4.1)', () => {
  let t: TestApp;
  let orgA: string;
  let childA: string;
  let orgB: string;
  let adminA: Api;
  let readerA: Api;
  let adminB: Api;

  before(async () => {
    // Configured defaults cover linux only: mac and windows fall back to the latest known release.
    t = await startTestApp({ ECS_DEFAULT_CLIENT_VERSIONS: 'linux=3.9.0' });
    ({ orgA, childA, orgB, adminA, readerA, adminB } = await t.world.tenants());
  });
  after(() => t.close());

  describe('default versions', () => {
    afterEach(async () => {
      await t.admin.delete('/client-version/default');
    });

    it('falls back to configured defaults, then to the latest known release (rule 1)', async () => {
      const res = await t.anon.get<Versions>('/client-version/default');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ linux: 'v3.9.0', mac: 'v3.10.0', windows: 'v3.10.2' });
    });

    it('PUT stores an override, v-prefixed; GET answers it; DELETE falls back again', async () => {
      const put = await t.admin.put<Versions>('/client-version/default', { linux: '4.0.0', mac: 'v4.0.1', windows: '4.0.2-beta.1' });
      expect(put.status).to.equal(200);
      expect(put.body).to.deep.equal({ linux: 'v4.0.0', mac: 'v4.0.1', windows: 'v4.0.2-beta.1' });
      expect((await t.anon.get('/client-version/default')).body).to.deep.equal(put.body);
      const del = await t.admin.delete<Versions>('/client-version/default');
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ linux: 'v3.9.0', mac: 'v3.10.0', windows: 'v3.10.2' });
    });

    it('PUT refuses a missing field and a non-semver value with 400 naming the field', async () => {
      const missing = await t.admin.put('/client-version/default', { linux: '1.0.0', mac: '1.0.0' });
      expectErrorBody(missing, 400, '/endpoint-control-service/v1/client-version/default');
      expect((missing.body as { message: string }).message).to.contain('body.windows');
      const bad = await t.admin.put('/client-version/default', { linux: '1.0', mac: '1.0.0', windows: '1.0.0' });
      expectErrorBody(bad, 400);
      expect((bad.body as { message: string }).message).to.contain('linux');
    });

    it('PUT with an organization-scoped token is 403; with an unknown token 401', async () => {
      expectErrorBody(await adminA.put('/client-version/default', { linux: '1.0.0', mac: '1.0.0', windows: '1.0.0' }), 403);
      expectErrorBody(await t.world.as('not-a-token').get('/client-version/default'), 401);
    });
  });

  describe('organization target versions', () => {
    it('PUT pins per OS, v-prefixes, clears one with "" and the legacy pin (rule 3)', async () => {
      const res = await adminA.put<OrgTargetVersion>(`/org-config/${childA}/target-version`, {
        linux: '3.9.2',
        mac: '',
        windows: 'v3.10.0',
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ orgId: childA, linux: 'v3.9.2', mac: '', windows: 'v3.10.0' });
      const cfg = await adminA.get<Record<string, unknown>>(`/org-config/${childA}`);
      expect(cfg.status).to.equal(200);
      expect(cfg.body.targetVersionLinux).to.equal('v3.9.2');
      expect(cfg.body).to.not.have.property('targetVersionMac');
      expect(cfg.body).to.not.have.property('targetVersion');
      expect(cfg.body.version).to.have.keys('sequenceNumber', 'primaryTerm');
    });

    it('PUT requires all three fields and at least one non-empty', async () => {
      const missing = await adminA.put(`/org-config/${orgA}/target-version`, { linux: '1.0.0', mac: '1.0.0' });
      expectErrorBody(missing, 400);
      const empty = await adminA.put(`/org-config/${orgA}/target-version`, { linux: '', mac: '', windows: '' });
      expectErrorBody(empty, 400);
      expect((empty.body as { message: string }).message).to.contain('at least one');
      const bad = await adminA.put(`/org-config/${orgA}/target-version`, { linux: 'latest', mac: '', windows: '' });
      expectErrorBody(bad, 400);
    });

    it('PUT on an unregistered organization is 404', async () => {
      expectErrorBody(await t.admin.put('/org-config/no-such-org/target-version', { linux: '1.0.0', mac: '', windows: '' }), 404);
    });

    it('PUT outside the token subtree is 403; a reader cannot write', async () => {
      expectErrorBody(await adminB.put(`/org-config/${orgA}/target-version`, { linux: '1.0.0', mac: '', windows: '' }), 403);
      expectErrorBody(await readerA.put(`/org-config/${orgA}/target-version`, { linux: '1.0.0', mac: '', windows: '' }), 403);
    });

    it('GET target-versions lists every org with a non-empty pin, and not cleared ones (rule 2)', async () => {
      await adminA.put(`/org-config/${orgA}/target-version`, { linux: '', mac: '3.9.1', windows: '' });
      await adminB.put(`/org-config/${orgB}/target-version`, { linux: '3.8.0', mac: '', windows: '' });
      const all = await t.anon.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(all.status).to.equal(200);
      const byOrg = new Map(all.body.map((o) => [o.orgId, o]));
      expect(byOrg.get(orgA)).to.deep.equal({ orgId: orgA, linux: '', mac: 'v3.9.1', windows: '' });
      expect(byOrg.get(orgB)).to.deep.equal({ orgId: orgB, linux: 'v3.8.0', mac: '', windows: '' });
      // A scoped reader sees only its subtree.
      const scoped = await readerA.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(scoped.body.map((o) => o.orgId)).to.include(orgA).and.not.include(orgB);

      const del = await adminB.delete<OrgTargetVersion>(`/org-config/${orgB}/target-version`);
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ orgId: orgB, linux: '', mac: '', windows: '' });
      const after = await t.anon.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(after.body.map((o) => o.orgId)).to.include(orgA).and.not.include(orgB);
    });

    it('DELETE clears all pins (rule 4) and is 404 for an unregistered org', async () => {
      await adminA.put(`/org-config/${childA}/target-version`, { linux: '3.9.2', mac: '3.9.1', windows: '3.10.0' });
      const del = await adminA.delete<OrgTargetVersion>(`/org-config/${childA}/target-version`);
      expect(del.body).to.deep.equal({ orgId: childA, linux: '', mac: '', windows: '' });
      const cfg = await adminA.get<Record<string, unknown>>(`/org-config/${childA}`);
      for (const f of ['targetVersion', 'targetVersionLinux', 'targetVersionMac', 'targetVersionWindows']) {
        expect(cfg.body).to.not.have.property(f);
      }
      expectErrorBody(await t.admin.delete('/org-config/no-such-org/target-version'), 404);
    });
  });
});
