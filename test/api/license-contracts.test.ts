import { expect } from 'chai';
import { expectErrorBody, uid, useTenants } from '../helpers/app.js';


interface Contract {
  orgId: string;
  type: string;
  expirationDate?: string;
  nbrLicensesPurchased?: number;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}
interface Page {
  pageRequest: { page: number; size: number };
  totalCount: number;
  totalPages: number;
  items: Contract[];
}

describe('organization license contracts (spec 4.7)', () => {

  const w = useTenants();

  describe('POST /org-license-contract', () => {
    it('creates the contract of an (org, type) pair with version 1; a second POST of the pair is 409', async () => {
      const org = await w.t.world.org(w.orgA);
      const res = await w.adminA.post<Contract>('/org-license-contract', {
        orgId: org,
        type: 'ATC',
        expirationDate: '2030-01-31T00:00:00Z',
        nbrLicensesPurchased: 250,
        createdBy: 'ignored',
        version: 9,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ orgId: org, type: 'ATC', expirationDate: '2030-01-31T00:00:00.000Z', nbrLicensesPurchased: 250, version: 1 });
      expect(res.body.createdBy).to.be.a('string').and.not.equal('ignored');
      expect(res.body.updatedBy).to.equal(res.body.createdBy);
      expect(Date.parse(res.body.createdAt)).to.be.closeTo(Date.now(), 60_000);
      expectErrorBody(await w.adminA.post('/org-license-contract', { orgId: org, type: 'ATC', nbrLicensesPurchased: 1 }), 409);
      // Another type of the same org is another contract.
      expect((await w.adminA.post('/org-license-contract', { orgId: org, type: 'DCI' })).status).to.equal(200);
      expect((await w.readerA.get<Contract>(`/org-license-contract/org/${org}/type/ATC`)).body.nbrLicensesPurchased).to.equal(250);
    });

    it('refuses an unregistered organization (404), bad bodies (400), readers and other orgs (403), no token (401)', async () => {
      expectErrorBody(await w.t.admin.post('/org-license-contract', { orgId: uid('ghost'), type: 'ATC' }), 404);
      expectErrorBody(await w.adminA.post('/org-license-contract', { orgId: w.orgA, type: 'GOLD' }), 400);
      expectErrorBody(await w.adminA.post('/org-license-contract', { type: 'ATC' }), 400);
      expectErrorBody(await w.adminA.post('/org-license-contract', { orgId: w.orgA, type: 'ATC', nbrLicensesPurchased: -5 }), 400);
      expectErrorBody(await w.adminA.post('/org-license-contract', { orgId: w.orgA, type: 'ATC', expirationDate: 'next year' }), 400);
      expectErrorBody(await w.adminA.post('/org-license-contract'), 400);
      expectErrorBody(await w.readerA.post('/org-license-contract', { orgId: w.orgA, type: 'BDHL' }), 403);
      expectErrorBody(await w.adminB.post('/org-license-contract', { orgId: w.orgA, type: 'BDHL' }), 403);
      expectErrorBody(await w.t.anon.post('/org-license-contract', { orgId: w.orgA, type: 'BDHL' }), 401);
      expectErrorBody(await w.readerA.get(`/org-license-contract/org/${w.orgA}/type/BDHL`), 404);
    });
  });

  describe('GET', () => {
    it('by org answers every type it has (none: empty); by org and type one, 404 when none', async () => {
      const org = await w.t.world.org(w.orgA);
      expect((await w.readerA.get(`/org-license-contract/org/${org}`)).body).to.deep.equal([]);
      await w.adminA.post('/org-license-contract', { orgId: org, type: 'DCI', nbrLicensesPurchased: 3 });
      await w.adminA.post('/org-license-contract', { orgId: org, type: 'ATC', nbrLicensesPurchased: 1 });
      const all = await w.readerA.get<Contract[]>(`/org-license-contract/org/${org}`);
      expect(all.status).to.equal(200);
      expect(all.body.map((c) => [c.type, c.nbrLicensesPurchased])).to.deep.equal([
        ['ATC', 1],
        ['DCI', 3],
      ]);
      const one = await w.readerA.get<Contract>(`/org-license-contract/org/${org}/type/DCI`);
      expect(one.body).to.deep.equal(all.body[1]);
      expectErrorBody(await w.readerA.get(`/org-license-contract/org/${org}/type/BDHL`), 404);
      expectErrorBody(await w.readerA.get(`/org-license-contract/org/${org}/type/GOLD`), 400);
      expectErrorBody(await w.adminB.get(`/org-license-contract/org/${org}`), 403);
      expectErrorBody(await w.adminB.get(`/org-license-contract/org/${org}/type/DCI`), 403);
    });
  });

  describe('PUT /org-license-contract/org/{orgId}/type/{type}', () => {
    it('replaces the terms, keeps createdAt/By, bumps the version; a stale version is 409', async () => {
      const org = await w.t.world.org(w.orgA);
      const created = (
        await w.adminA.post<Contract>('/org-license-contract', { orgId: org, type: 'BDHL', nbrLicensesPurchased: 10, expirationDate: '2030-01-01T00:00:00Z' })
      ).body;
      const path = `/org-license-contract/org/${org}/type/BDHL`;
      const res = await w.adminA.put<Contract>(path, { ...created, nbrLicensesPurchased: 20, expirationDate: undefined });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ orgId: org, type: 'BDHL', nbrLicensesPurchased: 20, version: 2, createdAt: created.createdAt, createdBy: created.createdBy });
      expect(res.body).to.not.have.property('expirationDate');
      expectErrorBody(await w.adminA.put(path, { ...created, nbrLicensesPurchased: 30 }), 409);
      expect((await w.readerA.get<Contract>(path)).body).to.deep.equal(res.body);
      const unconditional = await w.adminA.put<Contract>(path, { nbrLicensesPurchased: 40 });
      expect(unconditional.body).to.include({ nbrLicensesPurchased: 40, version: 3 });
    });

    it('is 404 without a contract; 400 for a mismatching body or type; 403 for readers and other orgs', async () => {
      const org = await w.t.world.org(w.orgA);
      expectErrorBody(await w.adminA.put(`/org-license-contract/org/${org}/type/ATC`, { nbrLicensesPurchased: 1 }), 404);
      await w.adminA.post('/org-license-contract', { orgId: org, type: 'ATC', nbrLicensesPurchased: 1 });
      const path = `/org-license-contract/org/${org}/type/ATC`;
      expectErrorBody(await w.adminA.put(path, { orgId: w.orgB, nbrLicensesPurchased: 2 }), 400);
      expectErrorBody(await w.adminA.put(path, { type: 'DCI', nbrLicensesPurchased: 2 }), 400);
      expectErrorBody(await w.adminA.put(`/org-license-contract/org/${org}/type/XYZ`, { nbrLicensesPurchased: 2 }), 400);
      expectErrorBody(await w.readerA.put(path, { nbrLicensesPurchased: 2 }), 403);
      expectErrorBody(await w.adminB.put(path, { nbrLicensesPurchased: 2 }), 403);
      expect((await w.readerA.get<Contract>(path)).body).to.include({ nbrLicensesPurchased: 1, version: 1 });
    });
  });

  describe('POST /org-license-contract/searchPage', () => {
    it('filters by OrgLicenseContractCriteria, pages and sorts, within the caller subtree', async () => {
      const root = await w.t.world.org();
      const kids = [await w.t.world.org(root), await w.t.world.org(root), await w.t.world.org(root)];
      const admin = w.t.world.as(await w.t.world.token('admin', root));
      for (const [i, org] of [root, ...kids].entries()) {
        await admin.post('/org-license-contract', { orgId: org, type: 'ATC', nbrLicensesPurchased: 10 * (i + 1) });
        if (i % 2 === 0) await admin.post('/org-license-contract', { orgId: org, type: 'DCI', nbrLicensesPurchased: i });
      }
      await admin.put(`/org-license-contract/org/${kids[0]}/type/ATC`, { nbrLicensesPurchased: 11 });
      const search = async (body: unknown, as = admin): Promise<Page> => {
        const res = await as.post<Page>('/org-license-contract/searchPage', body);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body;
      };
      const all = await search({});
      expect(all.totalCount).to.equal(6);
      expect(all.pageRequest).to.include({ page: 0, size: 20 });
      const atc = await search({ criteria: { type: 'ATC' }, pageRequest: { page: 0, size: 3, sort: [{ field: 'nbrLicensesPurchased', direction: 'DESC' }] } });
      expect(atc.totalCount).to.equal(4);
      expect(atc.totalPages).to.equal(2);
      expect(atc.items.map((c) => c.nbrLicensesPurchased)).to.deep.equal([40, 30, 11]);
      const page2 = await search({ criteria: { type: 'ATC' }, pageRequest: { page: 1, size: 3, sort: [{ field: 'nbrLicensesPurchased', direction: 'DESC' }] } });
      expect(page2.items.map((c) => c.nbrLicensesPurchased)).to.deep.equal([10]);
      const one = await search({ criteria: { orgId: kids[1] } });
      expect(one.items.map((c) => c.type)).to.deep.equal(['ATC', 'DCI']);
      const v2 = await search({ criteria: { version: 2 } });
      expect(v2.items.map((c) => [c.orgId, c.type, c.version])).to.deep.equal([[kids[0], 'ATC', 2]]);
      // A child's token sees the child's contracts only, whatever the criteria.
      const childReader = w.t.world.as(await w.t.world.token('reader', kids[1]));
      expect((await search({}, childReader)).items.map((c) => c.orgId)).to.deep.equal([kids[1], kids[1]]);
      expectErrorBody(await childReader.post('/org-license-contract/searchPage', { criteria: { orgId: root } }), 403);
    });

    it('refuses bad criteria, an unknown sort field and an oversize page with 400; no token 401', async () => {
      expectErrorBody(await w.readerA.post('/org-license-contract/searchPage', { criteria: { type: 'GOLD' } }), 400);
      expectErrorBody(await w.readerA.post('/org-license-contract/searchPage', { pageRequest: { page: 0, size: 5, sort: [{ field: 'secret' }] } }), 400);
      expectErrorBody(await w.readerA.post('/org-license-contract/searchPage', { pageRequest: { page: 0, size: 5000 } }), 400);
      expectErrorBody(await w.adminB.post('/org-license-contract/searchPage', { criteria: { orgId: w.childA } }), 403);
      expectErrorBody(await w.t.anon.post('/org-license-contract/searchPage', {}), 401);
    });
  });
});
