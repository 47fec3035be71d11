import fs from 'node:fs';
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, useTenants } from '../helpers/app.js';

import { BundleService, loadCatalogueFile } from '../../src/resources/bundles/service.js';
import { BundleStore } from '../../src/resources/bundles/store.js';
import { verifyInstallerUrl } from '../../src/resources/installer/signing.js';
import type { Bundle } from '../../src/resources/bundles/model.js';

type Modules = Record<string, unknown> & { version: number };

const catalogue = JSON.parse(fs.readFileSync(new URL('../../data/bundles.json', import.meta.url), 'utf8')) as {
  version: number;
  bundles: Bundle[];
};

describe('bundles and installer (spec 4.6)', () => {

  const w = useTenants();

  describe('catalogue', () => {
    it('GET /bundle answers the catalogue file loaded at start-up, as {id, name, description, modules}', async () => {
      const res = await w.readerA.get<Bundle[]>('/bundle');
      expect(res.status).to.equal(200);
      for (const b of catalogue.bundles) {
        expect(res.body.find((x) => x.id === b.id)).to.deep.equal(b);
      }
      for (const b of res.body) expect(b).to.have.all.keys('id', 'name', 'description', 'modules');
    });

    it('GET /bundle/{id} answers one bundle; an unknown id is 404; no token is 401', async () => {
      const b = catalogue.bundles[0];
      const res = await w.readerA.get<Bundle>(`/bundle/${b.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(b);
      expectErrorBody(await w.readerA.get(`/bundle/${uid('nope')}`), 404);
      expectErrorBody(await w.t.anon.get('/bundle'), 401);
      expectErrorBody(await w.t.anon.get(`/bundle/${b.id}`), 401);
    });

    it('the admin operation adds or replaces a bundle (system role only; modules must be module field names)', async () => {
      const id = uid('bundle');
      const body = { name: 'Test bundle', description: 'for tests', modules: ['cmd', 'vuln'] };
      expectErrorBody(await w.adminA.put(`/admin/bundles/${id}`, body), 403);
      expectErrorBody(await w.t.admin.put(`/admin/bundles/${id}`, { ...body, modules: ['cmd', 'teleport'] }), 400);
      expectErrorBody(await w.t.admin.put(`/admin/bundles/${id}`, { ...body, modules: [] }), 400);
      expectErrorBody(await w.t.admin.put(`/admin/bundles/${id}`, { ...body, id: 'other' }), 400);
      const put = await w.t.admin.put<Bundle>(`/admin/bundles/${id}`, body);
      expect(put.status).to.equal(200);
      expect(put.body).to.deep.equal({ id, ...body });
      const replaced = await w.t.admin.put<Bundle>(`/admin/bundles/${id}`, { ...body, modules: ['mdr'] });
      expect(replaced.body.modules).to.deep.equal(['mdr']);
      expect((await w.readerA.get<Bundle>(`/bundle/${id}`)).body.modules).to.deep.equal(['mdr']);
    });

    it('loading the catalogue keeps an admin replacement at the same file version and restores the file at a higher one', async () => {
      const id = uid('cat');
      const store = new BundleStore(w.t.server.store);
      const v1 = { version: 1, bundles: [{ id, name: 'From file', description: 'v1', modules: ['fim' as const] }] };
      await new BundleService(store, v1).loadCatalogue();
      expect((await w.readerA.get<Bundle>(`/bundle/${id}`)).body.description).to.equal('v1');
      // The admin operation writes at the running catalogue's version (1 in this test app).
      await w.t.admin.put(`/admin/bundles/${id}`, { name: 'Edited', description: 'admin', modules: ['wel'] });
      await new BundleService(store, v1).loadCatalogue();
      expect((await w.readerA.get<Bundle>(`/bundle/${id}`)).body).to.include({ name: 'Edited', description: 'admin' });
      await new BundleService(store, { ...v1, version: 2 }).loadCatalogue();
      expect((await w.readerA.get<Bundle>(`/bundle/${id}`)).body).to.deep.equal(v1.bundles[0]);
    });

    it('the repository catalogue file is valid', () => {
      const c = loadCatalogueFile();
      expect(c.version).to.equal(catalogue.version);
      expect(c.bundles.map((b) => b.id)).to.deep.equal(catalogue.bundles.map((b) => b.id));
    });
  });

  describe('subscriptions', () => {
    let one: string;
    let two: string;
    before(async () => {
      // Two overlapping bundles: fim and wel are in both.
      one = uid('one');
      two = uid('two');
      await w.t.admin.put(`/admin/bundles/${one}`, { name: 'One', modules: ['fim', 'wel', 'antivirus'] });
      await w.t.admin.put(`/admin/bundles/${two}`, { name: 'Two', modules: ['fim', 'wel', 'pan'] });
    });

    it('subscribe adds modules PENDING (creating the record), ACTIVE stay ACTIVE; unsubscribe keeps what another bundle covers', async () => {
      const org = await w.t.world.org(w.orgA);
      const modulesPath = `/org/${org}/enabled-modules`;
      const sub1 = await w.adminA.post<Modules>(`/org/${org}/bundle/${one}`, { id: one });
      expect(sub1.status, JSON.stringify(sub1.body)).to.equal(200);
      expect(sub1.body).to.include({ id: org, orgId: org, fim: 'PENDING', wel: 'PENDING', antivirus: 'PENDING', version: 1 });
      expect(sub1.body).to.not.have.any.keys('pan', 'subscribedBundles');

      expect((await w.adminA.post(`${modulesPath}/installcomplete`)).status).to.equal(204);
      const sub2 = await w.adminA.post<Modules>(`/org/${org}/bundle/${two}`, { id: two, name: 'Two' });
      expect(sub2.body).to.include({ fim: 'ACTIVE', wel: 'ACTIVE', antivirus: 'ACTIVE', pan: 'PENDING' });
      const subs = await w.readerA.get<Bundle[]>(`/org/${org}/bundle`);
      expect(subs.body.map((b) => b.id)).to.have.members([one, two]);

      const un1 = await w.adminA.delete<Modules>(`/org/${org}/bundle/${one}`);
      expect(un1.status).to.equal(200);
      expect(un1.body).to.include({ fim: 'ACTIVE', wel: 'ACTIVE', antivirus: 'INACTIVE', pan: 'PENDING' });
      expect((await w.readerA.get<Bundle[]>(`/org/${org}/bundle`)).body.map((b) => b.id)).to.deep.equal([two]);

      const un2 = await w.adminA.delete<Modules>(`/org/${org}/bundle/${two}`);
      expect(un2.body).to.include({ fim: 'INACTIVE', wel: 'INACTIVE', antivirus: 'INACTIVE', pan: 'INACTIVE' });
      expect((await w.readerA.get<Bundle[]>(`/org/${org}/bundle`)).body).to.deep.equal([]);
      expect((await w.readerA.get<Modules>(modulesPath)).body).to.deep.equal(un2.body);
    });

    it('subscribing to an existing record updates it, keeping its other modules; subscribing twice is idempotent', async () => {
      const org = await w.t.world.org(w.orgA);
      await w.adminA.post(`/org/${org}/enabled-modules`, { mdr: 'ACTIVE', fim: 'INACTIVE' });
      const sub = await w.adminA.post<Modules>(`/org/${org}/bundle/${one}`, {});
      expect(sub.body).to.include({ mdr: 'ACTIVE', fim: 'PENDING', wel: 'PENDING', antivirus: 'PENDING', version: 2 });
      const again = await w.adminA.post<Modules>(`/org/${org}/bundle/${one}`, {});
      expect(again.body).to.include({ mdr: 'ACTIVE', fim: 'PENDING', antivirus: 'PENDING' });
      expect((await w.readerA.get<Bundle[]>(`/org/${org}/bundle`)).body.map((b) => b.id)).to.deep.equal([one]);
    });

    it('refuses an unknown bundle (404), a body naming another bundle or none (400), a reader and another org (403)', async () => {
      const org = await w.t.world.org(w.orgA);
      expectErrorBody(await w.adminA.post(`/org/${org}/bundle/${uid('nope')}`, {}), 404);
      expectErrorBody(await w.adminA.post(`/org/${org}/bundle/${one}`, { id: two }), 400);
      expectErrorBody(await w.adminA.post(`/org/${org}/bundle/${one}`), 400);
      expectErrorBody(await w.adminA.post(`/org/${org}/bundle/${one}`, { modules: ['nonsense'] }), 400);
      expectErrorBody(await w.readerA.post(`/org/${org}/bundle/${one}`, {}), 403);
      expectErrorBody(await w.adminB.post(`/org/${org}/bundle/${one}`, {}), 403);
      expectErrorBody(await w.adminB.delete(`/org/${org}/bundle/${one}`), 403);
      expectErrorBody(await w.t.admin.post(`/org/${uid('ghost')}/bundle/${one}`, {}), 404);
      expectErrorBody(await w.t.anon.post(`/org/${org}/bundle/${one}`, {}), 401);
      expectErrorBody(await w.adminA.get(`/org/${org}/enabled-modules`), 404);
    });

    it('unsubscribing from an organization without a record is 404; from an unknown bundle 404', async () => {
      const org = await w.t.world.org(w.orgA);
      expectErrorBody(await w.adminA.delete(`/org/${org}/bundle/${one}`), 404);
      await w.adminA.post(`/org/${org}/bundle/${one}`, {});
      expectErrorBody(await w.adminA.delete(`/org/${org}/bundle/${uid('nope')}`), 404);
    });
  });

  describe('GET /ui/installer/{platform}', () => {
    const key = 'development-only-installer-signing-key';

    it('answers a JSON string: a URL of the current installer, signed so a download server can verify it offline', async () => {
      const defaults = (await w.t.anon.get<Record<string, string>>('/client-version/default')).body;
      for (const platform of ['windows', 'mac', 'linux']) {
        const res = await w.readerA.get<string>(`/ui/installer/${platform}`);
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.contain('application/json');
        expect(res.text.startsWith('"')).to.equal(true);
        const url = new URL(res.body);
        expect(url.pathname).to.contain(`/installers/${platform}/${defaults[platform]}/`);
        const verdict = verifyInstallerUrl(res.body, key);
        expect(verdict.valid, JSON.stringify(verdict)).to.equal(true);
        if (verdict.valid) {
          expect(verdict.expiresAt.getTime() - Date.now()).to.be.within(800_000, 900_000);
        }
        // Another key, another path or a changed expiry does not verify.
        expect(verifyInstallerUrl(res.body, 'another-signing-key-of-16')).to.deep.equal({ valid: false, reason: 'bad-signature' });
        const moved = res.body.replace(`/${platform}/`, '/other/');
        expect(verifyInstallerUrl(moved, key)).to.deep.equal({ valid: false, reason: 'bad-signature' });
        const later = new URL(res.body);
        later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
        expect(verifyInstallerUrl(later.toString(), key)).to.deep.equal({ valid: false, reason: 'bad-signature' });
        // After its lifetime it no longer verifies.
        expect(verifyInstallerUrl(res.body, key, Date.now() + 901_000)).to.deep.equal({ valid: false, reason: 'expired' });
      }
    });

    it('refuses another platform with 400 and a missing token with 401', async () => {
      expectErrorBody(await w.readerA.get('/ui/installer/solaris'), 400);
      expectErrorBody(await w.readerA.get('/ui/installer/Windows'), 400);
      expectErrorBody(await w.t.anon.get('/ui/installer/linux'), 401);
    });

    it('uses the configured base URL, signing key and lifetime', async () => {
      const other = await startTestApp({
        ECS_INSTALLER_BASE_URL: 'https://dl.example.test/agent/',
        ECS_INSTALLER_SIGNING_KEY: 'a-different-signing-key-1234',
        ECS_INSTALLER_URL_TTL_SECONDS: '60',
      });
      try {
        const res = await other.admin.get<string>('/ui/installer/linux');
        expect(res.body.startsWith('https://dl.example.test/agent/linux/')).to.equal(true);
        expect(verifyInstallerUrl(res.body, 'a-different-signing-key-1234').valid).to.equal(true);
        expect(verifyInstallerUrl(res.body, key).valid).to.equal(false);
        expect(verifyInstallerUrl(res.body, 'a-different-signing-key-1234', Date.now() + 61_000)).to.deep.equal({
          valid: false,
          reason: 'expired',
        });
      } finally {
        await other.close();
      }
    });
  });
});
