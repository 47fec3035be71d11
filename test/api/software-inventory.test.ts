import { expect } from 'chai';
import { clockPast } from '../helpers/wait.js';
import { expectErrorBody, useTenants } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface Software {
  id: string;
  endpointId: string;
  orgId: string;
  name: string;
  version: string;
  vendor?: string;
  installDate?: string;
  architecture?: string;
  firstSeen: string;
  lastSeen: string;
  endpointName?: string;
}
interface Count {
  name: string;
  version: string;
  count: number;
}
interface Page<T> {
  pageRequest: { page: number; size: number };
  totalCount: number;
  totalPages: number;
  items: T[];
}

const pairs = (list: { name: string; version: string }[]): string[] => list.map((s) => `${s.name}@${s.version}`);

describe('software inventory (spec 4.10)', () => {

  /** An agent endpoint of `orgId` (POST /endpoint); returns its id. */
  async function endpoint(orgId: string, fields: Record<string, unknown> = {}): Promise<string> {
    return (await w.t.world.endpoint(orgId, fields)).id;
  }

  const inv = (id: string) => `/endpoint/${id}/software-inventory`;

  const w = useTenants();

  describe('full inventory report (POST /endpoint/{id}/software-inventory)', () => {
    it('stores exactly the reported entries: 201 without a body, then GET answers them by name and version', async () => {
      const ep = await endpoint(w.orgA);
      const res = await w.adminA.post(inv(ep), [
        { name: 'Zoom', version: '5.17', vendor: 'Zoom Video', installDate: '2025-03-01', architecture: 'x64' },
        { name: 'Firefox', version: '120.0', vendor: '' },
      ]);
      expect(res.status, res.text).to.equal(201);
      expect(res.text).to.equal('');
      const got = await w.adminA.get<Software[]>(inv(ep));
      expect(got.status).to.equal(200);
      expect(pairs(got.body)).to.deep.equal(['Firefox@120.0', 'Zoom@5.17']);
      const zoom = got.body[1];
      expect(zoom).to.include({ endpointId: ep, orgId: w.orgA, vendor: 'Zoom Video', architecture: 'x64', installDate: '2025-03-01T00:00:00.000Z' });
      expect(zoom.id).to.be.a('string');
      expect(Date.parse(zoom.firstSeen)).to.be.closeTo(Date.now(), 60_000);
      expect(zoom.lastSeen).to.equal(zoom.firstSeen);
      // '' is absent, not an empty vendor.
      expect(got.body[0]).to.not.have.property('vendor');
    });

    it('replaces: new entries created, vanished ones removed, unchanged ones keep firstSeen and id', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [
        { name: 'A', version: '1' },
        { name: 'B', version: '1' },
        { name: 'C', version: '1' },
      ]);
      const before = (await w.adminA.get<Software[]>(inv(ep))).body;
      await clockPast(before.map((s) => s.lastSeen));
      const res = await w.adminA.post(inv(ep), [
        { name: 'A', version: '1' },
        { name: 'B', version: '2' },
        { name: 'D', version: '1' },
      ]);
      expect(res.status).to.equal(201);
      const after = (await w.adminA.get<Software[]>(inv(ep))).body;
      expect(pairs(after)).to.deep.equal(['A@1', 'B@2', 'D@1']);
      const a0 = before.find((s) => s.name === 'A') as Software;
      const a1 = after.find((s) => s.name === 'A') as Software;
      expect(a1.id).to.equal(a0.id);
      expect(a1.firstSeen).to.equal(a0.firstSeen);
      const d = after.find((s) => s.name === 'D') as Software;
      expect(Date.parse(d.firstSeen)).to.be.greaterThan(Date.parse(a0.firstSeen));
    });

    it('is idempotent: repeating a report leaves the same records; duplicates in one array count once', async () => {
      const ep = await endpoint(w.orgA);
      const report = [
        { name: 'A', version: '1', vendor: 'V' },
        { name: 'A', version: '1', vendor: 'V' },
        { name: 'B', version: '1' },
      ];
      expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
      const first = (await w.adminA.get<Software[]>(inv(ep))).body;
      expect(first).to.have.length(2);
      expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
      const second = (await w.adminA.get<Software[]>(inv(ep))).body;
      expect(second).to.deep.equal(first);
    });

    it('an empty array empties the inventory', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [{ name: 'A', version: '1' }]);
      expect((await w.adminA.post(inv(ep), [])).status).to.equal(201);
      expect((await w.adminA.get<Software[]>(inv(ep))).body).to.deep.equal([]);
    });

    it('more than 10,000 distinct entries → 413; 10,000 plus duplicates is accepted', async () => {
      const ep = await endpoint(w.orgA);
      const many = Array.from({ length: 10_001 }, (_, i) => ({ name: `s${i}`, version: '1' }));
      const res = await w.adminA.post(inv(ep), many);
      expectErrorBody(res, 413, `/endpoint-control-service/v1${inv(ep)}`);
      expect((res.body as { message: string }).message).to.contain('10000');
      expect((await w.adminA.get<Software[]>(inv(ep))).body).to.have.length(0);

      const full = Array.from({ length: 10_000 }, (_, i) => ({ name: `s${i}`, version: '1' }));
      const ok = await w.adminA.post(inv(ep), [...full, { name: 's0', version: '1' }]);
      expect(ok.status, ok.text).to.equal(201);
      const page = await w.adminA.post<Page<Software>>(`${inv(ep)}/search-page`, { pageRequest: { page: 0, size: 1 } });
      expect(page.body.totalCount).to.equal(10_000);
    });

    it('validates the body: 400 for a missing version, a control character, a non-array', async () => {
      const ep = await endpoint(w.orgA);
      const missing = await w.adminA.post(inv(ep), [{ name: 'A' }]);
      expectErrorBody(missing, 400);
      expect((missing.body as { message: string }).message).to.contain('version');
      expectErrorBody(await w.adminA.post(inv(ep), [{ name: 'A\u0001B', version: '1' }]), 400);
      expectErrorBody(await w.adminA.post(inv(ep), { name: 'A', version: '1' }), 400);
      expectErrorBody(await w.adminA.post(inv(ep), [{ name: 'A', version: '1', installDate: 'yesterday' }]), 400);
    });

    it('401 without a token; 404 for an unknown or deleted endpoint; 403 outside the subtree and for readers', async () => {
      const ep = await endpoint(w.orgA);
      expectErrorBody(await w.t.anon.post(inv(ep), []), 401);
      expectErrorBody(await w.adminA.post(inv('no-such-endpoint'), []), 404);
      const gone = await endpoint(w.orgA);
      expect((await w.t.admin.delete(`/endpoint/${gone}`)).status).to.equal(204);
      expectErrorBody(await w.adminA.post(inv(gone), []), 404);
      expectErrorBody(await w.adminA.get(inv(gone)), 404);
      expectErrorBody(await w.adminB.post(inv(ep), [{ name: 'A', version: '1' }]), 403);
      expectErrorBody(await w.adminB.get(inv(ep)), 403);
      expectErrorBody(await w.readerA.post(inv(ep), [{ name: 'A', version: '1' }]), 403);
      expect((await w.readerA.get(inv(ep))).status).to.equal(200);
    });

    it('an agent token writes and reads only its own endpoint', async () => {
      const own = await endpoint(w.orgA);
      const other = await endpoint(w.orgA);
      const agent = w.t.world.as(await w.t.world.token('agent', w.orgA, own));
      expect((await agent.post(inv(own), [{ name: 'A', version: '1' }])).status).to.equal(201);
      expect(pairs((await agent.get<Software[]>(inv(own))).body)).to.deep.equal(['A@1']);
      expect((await agent.post(`${inv(own)}/B`, { version: '2' })).status).to.equal(201);
      expectErrorBody(await agent.post(inv(other), [{ name: 'A', version: '1' }]), 403);
      expectErrorBody(await agent.post(`${inv(other)}/B`, { version: '2' }), 403);
      expectErrorBody(await agent.get(inv(other)), 403);
      expectErrorBody(await agent.get(`/org/${w.orgA}/software-inventory`), 403);
      expect(pairs((await w.adminA.get<Software[]>(inv(other))).body)).to.deep.equal([]);
    });
  });

  describe('single entries (POST, PUT, DELETE /endpoint/{id}/software-inventory/{name})', () => {
    it('POST adds one (201 with the record); a repeat keeps firstSeen and takes the new fields', async () => {
      const ep = await endpoint(w.orgA);
      const res = await w.adminA.post<Software>(`${inv(ep)}/${encodeURIComponent('Visual C++ 2015 (x64)')}`, {
        version: '14.36',
        vendor: 'Microsoft',
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ endpointId: ep, orgId: w.orgA, name: 'Visual C++ 2015 (x64)', version: '14.36', vendor: 'Microsoft' });
      await clockPast([res.body.lastSeen]);
      const again = await w.adminA.post<Software>(`${inv(ep)}/${encodeURIComponent('Visual C++ 2015 (x64)')}`, {
        name: 'Visual C++ 2015 (x64)',
        version: '14.36',
        architecture: 'x64',
      });
      expect(again.status).to.equal(201);
      expect(again.body.id).to.equal(res.body.id);
      expect(again.body.firstSeen).to.equal(res.body.firstSeen);
      expect(Date.parse(again.body.lastSeen)).to.be.greaterThan(Date.parse(res.body.lastSeen));
      expect(again.body).to.include({ architecture: 'x64' }).and.not.have.property('vendor');
      const list = (await w.adminA.get<Software[]>(inv(ep))).body;
      expect(list).to.deep.equal([again.body]);
      // A name with a slash travels percent-encoded in its path segment.
      const slash = await w.adminA.post<Software>(`${inv(ep)}/${encodeURIComponent('AC/DC Tool')}`, { version: '1' });
      expect(slash.status, slash.text).to.equal(201);
      expect(slash.body.name).to.equal('AC/DC Tool');
      expect((await w.adminA.delete(`${inv(ep)}/${encodeURIComponent('AC/DC Tool')}`, { body: { version: '1' } })).status).to.equal(204);
    });

    it('POST with a body name other than the path name is 400; unknown endpoint 404', async () => {
      const ep = await endpoint(w.orgA);
      expectErrorBody(await w.adminA.post(`${inv(ep)}/A`, { name: 'B', version: '1' }), 400);
      expectErrorBody(await w.adminA.post(`${inv(ep)}/A`, {}), 400);
      expectErrorBody(await w.adminA.post(`${inv('no-such-endpoint')}/A`, { version: '1' }), 404);
    });

    it('PUT moves the only version of a name to a new version (200)', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [{ name: 'Chrome', version: '119', vendor: 'Google', installDate: '2025-01-01' }, { name: 'X', version: '1' }]);
      const res = await w.adminA.put<Software>(`${inv(ep)}/Chrome`, { version: '120' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ name: 'Chrome', version: '120', vendor: 'Google', endpointId: ep });
      expect(res.body).to.not.have.property('installDate');
      expect(pairs((await w.adminA.get<Software[]>(inv(ep))).body)).to.deep.equal(['Chrome@120', 'X@1']);
    });

    it('PUT with several versions needs previousVersion (400 without), which picks the entry', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [
        { name: 'Python', version: '3.11' },
        { name: 'Python', version: '3.12' },
      ]);
      const ambiguous = await w.adminA.put(`${inv(ep)}/Python`, { version: '3.13' });
      expectErrorBody(ambiguous, 400);
      expect((ambiguous.body as { message: string }).message).to.contain('previousVersion');
      const res = await w.adminA.put<Software>(`${inv(ep)}/Python`, { version: '3.13', previousVersion: '3.11' });
      expect(res.status).to.equal(200);
      expect(res.body.version).to.equal('3.13');
      expect(pairs((await w.adminA.get<Software[]>(inv(ep))).body)).to.deep.equal(['Python@3.12', 'Python@3.13']);
      // Moving onto a version the endpoint already has merges the two entries.
      const merged = await w.adminA.put<Software>(`${inv(ep)}/Python`, { version: '3.13', previousVersion: '3.12' });
      expect(merged.status).to.equal(200);
      expect(pairs((await w.adminA.get<Software[]>(inv(ep))).body)).to.deep.equal(['Python@3.13']);
    });

    it('PUT for an unknown name or previousVersion is 404; a missing version 400', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [{ name: 'A', version: '1' }]);
      expectErrorBody(await w.adminA.put(`${inv(ep)}/Nope`, { version: '2' }), 404);
      expectErrorBody(await w.adminA.put(`${inv(ep)}/A`, { version: '2', previousVersion: '0.9' }), 404);
      expectErrorBody(await w.adminA.put(`${inv(ep)}/A`, { previousVersion: '1' }), 400);
    });

    it('DELETE with the version in the body removes it (204); again → 404; no body → 400', async () => {
      const ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [
        { name: 'A', version: '1' },
        { name: 'A', version: '2' },
      ]);
      const res = await w.adminA.delete(`${inv(ep)}/A`, { body: { name: 'A', version: '1' } });
      expect(res.status, res.text).to.equal(204);
      expect(pairs((await w.adminA.get<Software[]>(inv(ep))).body)).to.deep.equal(['A@2']);
      expectErrorBody(await w.adminA.delete(`${inv(ep)}/A`, { body: { version: '1' } }), 404);
      expectErrorBody(await w.adminA.delete(`${inv(ep)}/A`), 400);
      expectErrorBody(await w.adminB.delete(`${inv(ep)}/A`, { body: { version: '2' } }), 403);
    });
  });

  describe('endpoint search page (POST /endpoint/{id}/software-inventory/search-page)', () => {
    let ep: string;
    before(async () => {
      ep = await endpoint(w.orgA);
      await w.adminA.post(inv(ep), [
        { name: 'Microsoft Edge', version: '120', vendor: 'Microsoft' },
        { name: 'Microsoft Teams', version: '1.6', vendor: 'Microsoft' },
        { name: 'microsoft-helper', version: '1', vendor: 'Other' },
        { name: 'Slack', version: '4.3', vendor: 'Slack' },
        { name: 'Zoom', version: '5.17', vendor: 'Zoom' },
      ]);
    });

    it('pages in name order with totalCount and totalPages', async () => {
      const page = (p: number) => w.adminA.post<Page<Software>>(`${inv(ep)}/search-page`, { pageRequest: { page: p, size: 2 } });
      const p0 = await page(0);
      expect(p0.status).to.equal(200);
      expect(p0.body.totalCount).to.equal(5);
      expect(p0.body.totalPages).to.equal(3);
      const p1 = await page(1);
      const p2 = await page(2);
      expect([...p0.body.items, ...p1.body.items, ...p2.body.items].map((s) => s.name)).to.deep.equal([
        'Microsoft Edge',
        'Microsoft Teams',
        'Slack',
        'Zoom',
        'microsoft-helper',
      ]);
    });

    it('filters by case-insensitive name prefix, exact name, version and vendor; sorts DESC', async () => {
      const q = (criteria: object, sort?: object[]) =>
        w.adminA.post<Page<Software>>(`${inv(ep)}/search-page`, { criteria, pageRequest: { page: 0, size: 10, ...(sort ? { sort } : {}) } });
      expect((await q({ namePrefix: 'microsoft' })).body.items.map((s) => s.name)).to.deep.equal([
        'Microsoft Edge',
        'Microsoft Teams',
        'microsoft-helper',
      ]);
      expect((await q({ name: 'Microsoft Edge' })).body.totalCount).to.equal(1);
      expect((await q({ name: 'microsoft edge' })).body.totalCount).to.equal(0);
      expect((await q({ namePrefix: 'Micro', vendor: 'Microsoft' })).body.items.map((s) => s.name)).to.deep.equal([
        'Microsoft Edge',
        'Microsoft Teams',
      ]);
      expect((await q({ version: '4.3' })).body.items.map((s) => s.name)).to.deep.equal(['Slack']);
      expect((await q({}, [{ field: 'name', direction: 'DESC' }])).body.items[0].name).to.equal('microsoft-helper');
    });

    it('400 for an unknown sort field; 404 for an unknown endpoint; 403 outside the subtree', async () => {
      expectErrorBody(await w.adminA.post(`${inv(ep)}/search-page`, { pageRequest: { sort: [{ field: 'count' }] } }), 400);
      expectErrorBody(await w.adminA.post(`${inv('no-such-endpoint')}/search-page`, {}), 404);
      expectErrorBody(await w.adminB.post(`${inv(ep)}/search-page`, {}), 403);
    });
  });

  describe('organization views', () => {
    let org: string;
    let child: string;
    let e1: string;
    let e2: string;
    let e3: string;
    let admin: Api;

    before(async () => {
      org = await w.t.world.org();
      child = await w.t.world.org(org);
      admin = w.t.world.as(await w.t.world.token('admin', org));
      e1 = await endpoint(org, { displayName: 'alpha' });
      e2 = await endpoint(org, { displayName: 'bravo' });
      e3 = await endpoint(org, { displayName: undefined });
      const inChild = await endpoint(child);
      await admin.post(inv(e1), [
        { name: 'Chrome', version: '120' },
        { name: 'Slack', version: '4.3' },
      ]);
      await admin.post(inv(e2), [
        { name: 'Chrome', version: '120' },
        { name: 'Chrome', version: '119' },
      ]);
      await admin.post(inv(e3), [{ name: 'Chrome', version: '120' }]);
      await admin.post(inv(inChild), [
        { name: 'Chrome', version: '120' },
        { name: 'ChildOnly', version: '1' },
      ]);
    });

    it('GET software-inventory covers exactly the organization (not its subtree), by name, version, endpoint', async () => {
      const res = await admin.get<Software[]>(`/org/${org}/software-inventory`);
      expect(res.status).to.equal(200);
      expect(res.body.map((s) => `${s.name}@${s.version}:${s.endpointId}`)).to.deep.equal(
        [`Chrome@119:${e2}`, ...[e1, e2, e3].sort().map((e) => `Chrome@120:${e}`), `Slack@4.3:${e1}`],
      );
      expect(res.body.every((s) => s.orgId === org)).to.equal(true);
      const childView = await admin.get<Software[]>(`/org/${child}/software-inventory`);
      expect(pairs(childView.body)).to.deep.equal(['ChildOnly@1', 'Chrome@120']);
    });

    it('GET software-inventory/{name}/{version} lists the endpoints having it', async () => {
      const res = await admin.get<Software[]>(`/org/${org}/software-inventory/Chrome/120`);
      expect(res.status).to.equal(200);
      expect(res.body.map((s) => s.endpointId)).to.deep.equal([e1, e2, e3].sort());
      expect((await admin.get<Software[]>(`/org/${org}/software-inventory/Chrome/118`)).body).to.deep.equal([]);
    });

    it('GET endpoint-software-inventory/{name}/{version} adds the endpoint displayName', async () => {
      const res = await admin.get<Software[]>(`/org/${org}/endpoint-software-inventory/Chrome/120`);
      expect(res.status).to.equal(200);
      const byEp = new Map(res.body.map((s) => [s.endpointId, s.endpointName]));
      expect(byEp.get(e1)).to.equal('alpha');
      expect(byEp.get(e2)).to.equal('bravo');
      expect(byEp.has(e3)).to.equal(true);
      expect(byEp.get(e3)).to.equal(undefined);
      expect(res.body[0]).to.include({ name: 'Chrome', version: '120', orgId: org });
    });

    it('GET software-inventory-summary counts endpoints per name and version in the organization only', async () => {
      const res = await admin.get<Count[]>(`/org/${org}/software-inventory-summary`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal([
        { name: 'Chrome', version: '119', count: 1 },
        { name: 'Chrome', version: '120', count: 3 },
        { name: 'Slack', version: '4.3', count: 1 },
      ]);
    });

    it('summary search-page: filters by name prefix, sorts by count, pages', async () => {
      const sp = (body: object) => admin.post<Page<Count>>(`/org/${org}/software-inventory-summary/search-page`, body);
      const chrome = await sp({ criteria: { namePrefix: 'chr' } });
      expect(chrome.status, chrome.text).to.equal(200);
      expect(chrome.body.totalCount).to.equal(2);
      expect(chrome.body.items).to.deep.equal([
        { name: 'Chrome', version: '119', count: 1 },
        { name: 'Chrome', version: '120', count: 3 },
      ]);
      const byCount = await sp({ pageRequest: { page: 0, size: 2, sort: [{ field: 'count', direction: 'DESC' }] } });
      expect(byCount.body.items).to.deep.equal([
        { name: 'Chrome', version: '120', count: 3 },
        { name: 'Chrome', version: '119', count: 1 },
      ]);
      expect(byCount.body.totalPages).to.equal(2);
      const second = await sp({ pageRequest: { page: 1, size: 2, sort: [{ field: 'count', direction: 'DESC' }] } });
      expect(second.body.items).to.deep.equal([{ name: 'Slack', version: '4.3', count: 1 }]);
      const byNameDesc = await sp({ pageRequest: { page: 0, size: 5, sort: [{ field: 'name', direction: 'DESC' }] } });
      expect(pairs(byNameDesc.body.items)).to.deep.equal(['Slack@4.3', 'Chrome@119', 'Chrome@120']);
    });

    it('summary search-page: count only as the first sort field; count-sorted pages end at 10,000', async () => {
      const url = `/org/${org}/software-inventory-summary/search-page`;
      expectErrorBody(await admin.post(url, { pageRequest: { sort: [{ field: 'name' }, { field: 'count' }] } }), 400);
      expectErrorBody(await admin.post(url, { pageRequest: { page: 10, size: 1000, sort: [{ field: 'count' }] } }), 400);
      expectErrorBody(await admin.post(url, { pageRequest: { sort: [{ field: 'vendor' }] } }), 400);
      // Name-sorted paging has no such limit.
      const deep = await admin.post<Page<Count>>(url, { pageRequest: { page: 10, size: 1000 } });
      expect(deep.status).to.equal(200);
      expect(deep.body.items).to.deep.equal([]);
      expect(deep.body.totalCount).to.equal(3);
    });

    it('org views: 403 outside the subtree and for agents, 404 for an unknown organization, 401 without a token', async () => {
      for (const path of [
        `/org/${org}/software-inventory`,
        `/org/${org}/software-inventory/Chrome/120`,
        `/org/${org}/endpoint-software-inventory/Chrome/120`,
        `/org/${org}/software-inventory-summary`,
      ]) {
        expectErrorBody(await w.adminB.get(path), 403, `/endpoint-control-service/v1${path}`);
        expectErrorBody(await w.t.anon.get(path), 401);
      }
      expectErrorBody(await w.adminB.post(`/org/${org}/software-inventory-summary/search-page`, {}), 403);
      expectErrorBody(await w.t.admin.get('/org/no-such-org/software-inventory-summary'), 404);
      // A token of the parent organization reaches the child (subtree rule) and sees only the child's entries.
      const parent = w.t.world.as(await w.t.world.token('reader', w.orgA));
      expect((await parent.get(`/org/${w.childA}/software-inventory`)).status).to.equal(200);
    });
  });

  describe('deleted and uninstalled endpoints', () => {
    it('are left out of organization views and counts (their own inventory stays readable until deleted)', async () => {
      const org = await w.t.world.org();
      const admin = w.t.world.as(await w.t.world.token('admin', org));
      const live = await endpoint(org);
      const uninstalled = await endpoint(org);
      const deleted = await endpoint(org);
      for (const ep of [live, uninstalled, deleted]) await admin.post(inv(ep), [{ name: 'Chrome', version: '120' }]);
      const before = await admin.get<Count[]>(`/org/${org}/software-inventory-summary`);
      expect(before.body).to.deep.equal([{ name: 'Chrome', version: '120', count: 3 }]);

      const agent = w.t.world.as(await w.t.world.token('agent', org, uninstalled));
      expect((await agent.post(`/endpoint/${uninstalled}/uninstall`)).status).to.equal(204);
      expect((await admin.delete(`/endpoint/${deleted}`)).status).to.equal(204);

      expect((await admin.get<Count[]>(`/org/${org}/software-inventory-summary`)).body).to.deep.equal([
        { name: 'Chrome', version: '120', count: 1 },
      ]);
      const page = await admin.post<Page<Count>>(`/org/${org}/software-inventory-summary/search-page`, {});
      expect(page.body.items).to.deep.equal([{ name: 'Chrome', version: '120', count: 1 }]);
      expect(page.body.totalCount).to.equal(1);
      const list = await admin.get<Software[]>(`/org/${org}/software-inventory`);
      expect(list.body.map((s) => s.endpointId)).to.deep.equal([live]);
      expect((await admin.get<Software[]>(`/org/${org}/software-inventory/Chrome/120`)).body.map((s) => s.endpointId)).to.deep.equal([live]);
      expect((await admin.get<Software[]>(`/org/${org}/endpoint-software-inventory/Chrome/120`)).body.map((s) => s.endpointId)).to.deep.equal([live]);
      expect((await admin.get<Software[]>(inv(uninstalled))).body).to.have.length(1);
      expectErrorBody(await admin.get(inv(deleted)), 404);
    });
  });
});
