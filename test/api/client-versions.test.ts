import { expect } from 'chai';
import { expectErrorBody, useTenants } from '../helpers/app.js';


interface Versions {
  linux: string;
  mac: string;
  windows: string;
}
interface OrgTargetVersion extends Versions {
  orgId: string;
}

describe('client versions (spec 4.1)', () => {

  // Configured defaults cover linux only: mac and windows fall back to the latest known release.
  const w = useTenants({ ECS_DEFAULT_CLIENT_VERSIONS: 'linux=3.9.0' });

  describe('default versions', () => {
    afterEach(async () => {
      await w.t.admin.delete('/client-version/default');
    });

    it('falls back to configured defaults, then to the latest known release (rule 1)', async () => {
      const res = await w.t.anon.get<Versions>('/client-version/default');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ linux: 'v3.9.0', mac: 'v3.10.0', windows: 'v3.10.2' });
    });

    it('PUT stores an override, v-prefixed; GET answers it; DELETE falls back again', async () => {
      const put = await w.t.admin.put<Versions>('/client-version/default', { linux: '4.0.0', mac: 'v4.0.1', windows: '4.0.2-beta.1' });
      expect(put.status).to.equal(200);
      expect(put.body).to.deep.equal({ linux: 'v4.0.0', mac: 'v4.0.1', windows: 'v4.0.2-beta.1' });
      expect((await w.t.anon.get('/client-version/default')).body).to.deep.equal(put.body);
      const del = await w.t.admin.delete<Versions>('/client-version/default');
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ linux: 'v3.9.0', mac: 'v3.10.0', windows: 'v3.10.2' });
    });

    it('PUT refuses a missing field and a non-semver value with 400 naming the field', async () => {
      const missing = await w.t.admin.put('/client-version/default', { linux: '1.0.0', mac: '1.0.0' });
      expectErrorBody(missing, 400, '/endpoint-control-service/v1/client-version/default');
      expect((missing.body as { message: string }).message).to.contain('body.windows');
      const bad = await w.t.admin.put('/client-version/default', { linux: '1.0', mac: '1.0.0', windows: '1.0.0' });
      expectErrorBody(bad, 400);
      expect((bad.body as { message: string }).message).to.contain('linux');
    });

    it('PUT with an organization-scoped token is 403; with an unknown token 401', async () => {
      expectErrorBody(await w.adminA.put('/client-version/default', { linux: '1.0.0', mac: '1.0.0', windows: '1.0.0' }), 403);
      expectErrorBody(await w.t.world.as('not-a-token').get('/client-version/default'), 401);
    });
  });

  describe('organization target versions', () => {
    it('PUT pins per OS, v-prefixes, clears one with "" and the legacy pin (rule 3)', async () => {
      const res = await w.adminA.put<OrgTargetVersion>(`/org-config/${w.childA}/target-version`, {
        linux: '3.9.2',
        mac: '',
        windows: 'v3.10.0',
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ orgId: w.childA, linux: 'v3.9.2', mac: '', windows: 'v3.10.0' });
      const cfg = await w.adminA.get<Record<string, unknown>>(`/org-config/${w.childA}`);
      expect(cfg.status).to.equal(200);
      expect(cfg.body.targetVersionLinux).to.equal('v3.9.2');
      expect(cfg.body).to.not.have.property('targetVersionMac');
      expect(cfg.body).to.not.have.property('targetVersion');
      expect(cfg.body.version).to.have.keys('sequenceNumber', 'primaryTerm');
    });

    it('PUT requires all three fields and at least one non-empty', async () => {
      const missing = await w.adminA.put(`/org-config/${w.orgA}/target-version`, { linux: '1.0.0', mac: '1.0.0' });
      expectErrorBody(missing, 400);
      const empty = await w.adminA.put(`/org-config/${w.orgA}/target-version`, { linux: '', mac: '', windows: '' });
      expectErrorBody(empty, 400);
      expect((empty.body as { message: string }).message).to.contain('at least one');
      const bad = await w.adminA.put(`/org-config/${w.orgA}/target-version`, { linux: 'latest', mac: '', windows: '' });
      expectErrorBody(bad, 400);
    });

    it('PUT on an unregistered organization is 404', async () => {
      expectErrorBody(await w.t.admin.put('/org-config/no-such-org/target-version', { linux: '1.0.0', mac: '', windows: '' }), 404);
    });

    it('PUT outside the token subtree is 403; a reader cannot write', async () => {
      expectErrorBody(await w.adminB.put(`/org-config/${w.orgA}/target-version`, { linux: '1.0.0', mac: '', windows: '' }), 403);
      expectErrorBody(await w.readerA.put(`/org-config/${w.orgA}/target-version`, { linux: '1.0.0', mac: '', windows: '' }), 403);
    });

    it('GET target-versions lists every org with a non-empty pin, and not cleared ones (rule 2)', async () => {
      await w.adminA.put(`/org-config/${w.orgA}/target-version`, { linux: '', mac: '3.9.1', windows: '' });
      await w.adminB.put(`/org-config/${w.orgB}/target-version`, { linux: '3.8.0', mac: '', windows: '' });
      const all = await w.t.anon.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(all.status).to.equal(200);
      const byOrg = new Map(all.body.map((o) => [o.orgId, o]));
      expect(byOrg.get(w.orgA)).to.deep.equal({ orgId: w.orgA, linux: '', mac: 'v3.9.1', windows: '' });
      expect(byOrg.get(w.orgB)).to.deep.equal({ orgId: w.orgB, linux: 'v3.8.0', mac: '', windows: '' });
      // A scoped reader sees only its subtree.
      const scoped = await w.readerA.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(scoped.body.map((o) => o.orgId)).to.include(w.orgA).and.not.include(w.orgB);

      const del = await w.adminB.delete<OrgTargetVersion>(`/org-config/${w.orgB}/target-version`);
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ orgId: w.orgB, linux: '', mac: '', windows: '' });
      const after = await w.t.anon.get<OrgTargetVersion[]>('/org-config/target-versions');
      expect(after.body.map((o) => o.orgId)).to.include(w.orgA).and.not.include(w.orgB);
    });

    it('DELETE clears all pins (rule 4) and is 404 for an unregistered org', async () => {
      await w.adminA.put(`/org-config/${w.childA}/target-version`, { linux: '3.9.2', mac: '3.9.1', windows: '3.10.0' });
      const del = await w.adminA.delete<OrgTargetVersion>(`/org-config/${w.childA}/target-version`);
      expect(del.body).to.deep.equal({ orgId: w.childA, linux: '', mac: '', windows: '' });
      const cfg = await w.adminA.get<Record<string, unknown>>(`/org-config/${w.childA}`);
      for (const f of ['targetVersion', 'targetVersionLinux', 'targetVersionMac', 'targetVersionWindows']) {
        expect(cfg.body).to.not.have.property(f);
      }
      expectErrorBody(await w.t.admin.delete('/org-config/no-such-org/target-version'), 404);
    });
  });
});
