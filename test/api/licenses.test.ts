import { expect } from 'chai';
import { startTestApp, expectErrorBody, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

type State = 'CREATED' | 'ACTIVATED' | 'REVOKED' | 'DEACTIVATED' | 'EXPIRED';
const STATES: State[] = ['CREATED', 'ACTIVATED', 'REVOKED', 'DEACTIVATED', 'EXPIRED'];

interface LicenseInfo {
  id: string;
  state: State;
  type: string;
  creationDate: string;
  activationDate?: string;
  expirationDate?: string;
  lastActiveDate?: string;
  revocationDate?: string;
  deactivationDate?: string;
  orgId: string;
  ownerId?: string;
  daysInactiveBeforeDeactivation?: number;
  version: number;
}

/** The expected machine, written out independently of the implementation's table. */
const ALLOWED = new Set([
  'CREATED>ACTIVATED',
  'ACTIVATED>DEACTIVATED',
  'ACTIVATED>REVOKED',
  'ACTIVATED>EXPIRED',
  'DEACTIVATED>ACTIVATED',
  'DEACTIVATED>REVOKED',
]);
/** An allowed path from CREATED to each state. */
const PATH_TO: Record<State, State[]> = {
  CREATED: [],
  ACTIVATED: ['ACTIVATED'],
  DEACTIVATED: ['ACTIVATED', 'DEACTIVATED'],
  REVOKED: ['ACTIVATED', 'REVOKED'],
  EXPIRED: ['ACTIVATED', 'EXPIRED'],
};
const STAMP: Record<State, keyof LicenseInfo | undefined> = {
  CREATED: undefined,
  ACTIVATED: 'activationDate',
  DEACTIVATED: 'deactivationDate',
  REVOKED: 'revocationDate',
  EXPIRED: 'expirationDate',
};

describe('licenses (spec 4.7)', () => {
  let t: TestApp;
  let orgA: string;
  let childA: string;
  let orgB: string;
  let adminA: Api;
  let readerA: Api;
  let adminB: Api;

  async function license(orgId = orgA, fields: Record<string, unknown> = {}): Promise<LicenseInfo> {
    const id = uid('lic');
    const res = await adminA.put<LicenseInfo>(`/license/${id}`, { type: 'ATC', orgId, ...fields });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  before(async () => {
    t = await startTestApp();
    ({ orgA, childA, orgB, adminA, readerA, adminB } = await t.world.tenants());
  });
  after(() => t.close());

  describe('PATCH /license/{id}/state/{licenseState}: every pair of states', () => {
    for (const from of STATES) {
      for (const to of STATES) {
        const allowed = ALLOWED.has(`${from}>${to}`);
        it(`${from} → ${to}: ${allowed ? '200' : '409'}`, async () => {
          const lic = await license();
          for (const step of PATH_TO[from]) {
            expect((await adminA.patch(`/license/${lic.id}/state/${step}`)).status).to.equal(200);
          }
          const before = (await readerA.get<LicenseInfo>(`/license/${lic.id}`)).body;
          expect(before.state).to.equal(from);
          const res = await adminA.patch<LicenseInfo>(`/license/${lic.id}/state/${to}`);
          if (allowed) {
            expect(res.status, JSON.stringify(res.body)).to.equal(200);
            expect(res.body.state).to.equal(to);
            expect(res.body.version).to.equal(before.version + 1);
            const stamp = STAMP[to] as keyof LicenseInfo;
            expect(Date.parse(res.body[stamp] as string)).to.be.closeTo(Date.now(), 60_000);
            expect(res.body[stamp]).to.not.equal(before[stamp]);
            if (to === 'ACTIVATED') expect(res.body.lastActiveDate).to.equal(res.body.activationDate);
            expect((await readerA.get(`/license/${lic.id}`)).body).to.deep.equal(res.body);
          } else {
            expectErrorBody(res, 409, `/endpoint-control-service/v1/license/${lic.id}/state/${to}`);
            expect((await readerA.get(`/license/${lic.id}`)).body).to.deep.equal(before);
          }
        });
      }
    }
  });

  describe('PATCH refusals', () => {
    it('an unknown state is 400, an unknown license 404, a reader or another org 403, no token 401', async () => {
      const lic = await license();
      expectErrorBody(await adminA.patch(`/license/${lic.id}/state/SUSPENDED`), 400);
      expectErrorBody(await adminA.patch(`/license/${lic.id}/state/activated`), 400);
      expectErrorBody(await adminA.patch(`/license/${uid('nope')}/state/ACTIVATED`), 404);
      expectErrorBody(await readerA.patch(`/license/${lic.id}/state/ACTIVATED`), 403);
      expectErrorBody(await adminB.patch(`/license/${lic.id}/state/ACTIVATED`), 403);
      expectErrorBody(await t.anon.patch(`/license/${lic.id}/state/ACTIVATED`), 401);
      expect((await readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.state).to.equal('CREATED');
    });
  });

  describe('PUT /license/{id}', () => {
    it('creates a license in CREATED with creationDate and version 1; GET answers it', async () => {
      const id = uid('lic');
      const res = await adminA.put<LicenseInfo>(`/license/${id}`, {
        type: 'BDHL',
        orgId: childA,
        ownerId: 'owner-1',
        daysInactiveBeforeDeactivation: 30,
        activationDate: '2020-01-01T00:00:00.000Z',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id, state: 'CREATED', type: 'BDHL', orgId: childA, ownerId: 'owner-1', daysInactiveBeforeDeactivation: 30, version: 1 });
      expect(res.body).to.not.have.property('activationDate');
      expect(Date.parse(res.body.creationDate)).to.be.closeTo(Date.now(), 60_000);
      expect((await readerA.get(`/license/${id}`)).body).to.deep.equal(res.body);
    });

    it('replaces the fields, keeps state and dates, bumps the version; a stale version is 409', async () => {
      const lic = await license(orgA, { ownerId: 'first' });
      const activated = (await adminA.patch<LicenseInfo>(`/license/${lic.id}/state/ACTIVATED`)).body;
      const res = await adminA.put<LicenseInfo>(`/license/${lic.id}`, {
        ...activated,
        type: 'DCI',
        ownerId: undefined,
        daysInactiveBeforeDeactivation: 7,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const { ownerId: _dropped, ...kept } = activated;
      expect(_dropped).to.equal('first');
      expect(res.body).to.deep.equal({
        ...kept,
        type: 'DCI',
        daysInactiveBeforeDeactivation: 7,
        version: activated.version + 1,
      });
      expectErrorBody(await adminA.put(`/license/${lic.id}`, { ...activated, ownerId: 'late' }), 409);
      expect((await readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.version).to.equal(activated.version + 1);
    });

    it('cannot change the state: a different state is 409, the same state is fine', async () => {
      const lic = await license();
      expectErrorBody(await adminA.put(`/license/${lic.id}`, { ...lic, state: 'ACTIVATED' }), 409);
      expect((await adminA.put<LicenseInfo>(`/license/${lic.id}`, { ...lic, state: 'CREATED' })).body.version).to.equal(2);
      expectErrorBody(await adminA.put(`/license/${uid('lic')}`, { type: 'ATC', orgId: orgA, state: 'ACTIVATED' }), 409);
      expectErrorBody(await adminA.put(`/license/${uid('lic')}`, { type: 'ATC', orgId: orgA, version: 3 }), 409);
      expect((await readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.state).to.equal('CREATED');
    });

    it('refuses bad bodies (400), an unregistered organization (404), readers and foreign orgs (403)', async () => {
      const id = uid('lic');
      expectErrorBody(await adminA.put(`/license/${id}`, { type: 'XYZ', orgId: orgA }), 400);
      expectErrorBody(await adminA.put(`/license/${id}`, { type: 'ATC' }), 400);
      expectErrorBody(await adminA.put(`/license/${id}`, { type: 'ATC', orgId: orgA, state: 'NEW' }), 400);
      expectErrorBody(await adminA.put(`/license/${id}`, { type: 'ATC', orgId: orgA, daysInactiveBeforeDeactivation: -1 }), 400);
      expectErrorBody(await adminA.put(`/license/${id}`, { id: 'other', type: 'ATC', orgId: orgA }), 400);
      expectErrorBody(await adminA.put(`/license/${id}`), 400);
      expectErrorBody(await t.admin.put(`/license/${id}`, { type: 'ATC', orgId: uid('ghost') }), 404);
      expectErrorBody(await readerA.put(`/license/${id}`, { type: 'ATC', orgId: orgA }), 403);
      expectErrorBody(await adminB.put(`/license/${id}`, { type: 'ATC', orgId: orgA }), 403);
      expectErrorBody(await adminA.get(`/license/${id}`), 404);
      // Moving a license out of reach, or taking one from another org, is refused too.
      const lic = await license();
      expectErrorBody(await adminA.put(`/license/${lic.id}`, { type: 'ATC', orgId: orgB }), 403);
      expectErrorBody(await adminB.put(`/license/${lic.id}`, { type: 'ATC', orgId: orgB }), 403);
      expect((await readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.orgId).to.equal(orgA);
    });
  });

  describe('GET /license/{id}', () => {
    it('is 404 for an unknown id, 403 from another org, 401 without a token', async () => {
      const lic = await license(childA);
      expectErrorBody(await readerA.get(`/license/${uid('nope')}`), 404);
      expectErrorBody(await adminB.get(`/license/${lic.id}`), 403);
      expectErrorBody(await t.anon.get(`/license/${lic.id}`), 401);
      expect((await t.admin.get<LicenseInfo>(`/license/${lic.id}`)).body.orgId).to.equal(childA);
    });
  });

  describe('POST /license/count', () => {
    it('counts the licenses matching every given criterion, within the caller subtree', async () => {
      const org = await t.world.org();
      const child = await t.world.org(org);
      const admin = t.world.as(await t.world.token('admin', org));
      const put = async (orgId: string, type: string, ownerId: string, days: number): Promise<LicenseInfo> =>
        (await admin.put<LicenseInfo>(`/license/${uid('lic')}`, { type, orgId, ownerId, daysInactiveBeforeDeactivation: days })).body;
      const a = await put(org, 'ATC', 'alice', 30);
      await put(org, 'ATC', 'bob', 30);
      await put(org, 'DCI', 'alice', 60);
      await put(child, 'ATC', 'alice', 30);
      await admin.patch(`/license/${a.id}/state/ACTIVATED`);
      const count = async (criteria: Record<string, unknown>, as = admin): Promise<number> => {
        const res = await as.post<{ count: number }>('/license/count', criteria);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body).to.have.all.keys('count');
        return res.body.count;
      };
      expect(await count({})).to.equal(4);
      expect(await count({ orgId: org })).to.equal(3);
      expect(await count({ orgId: child })).to.equal(1);
      expect(await count({ type: 'ATC' })).to.equal(3);
      expect(await count({ type: 'ATC', ownerId: 'alice' })).to.equal(2);
      expect(await count({ type: 'ATC', ownerId: 'alice', orgId: org })).to.equal(1);
      expect(await count({ state: 'ACTIVATED' })).to.equal(1);
      expect(await count({ state: 'CREATED', daysInactiveBeforeDeactivation: 30 })).to.equal(2);
      expect(await count({ id: a.id })).to.equal(1);
      expect(await count({ id: a.id, version: 2 })).to.equal(1);
      expect(await count({ id: a.id, version: 1 })).to.equal(0);
      expect(await count({ ownerId: 'nobody' })).to.equal(0);
      // A token of the child org sees only the child's license; the system role counts beyond any subtree.
      const childReader = t.world.as(await t.world.token('reader', child));
      expect(await count({ ownerId: 'alice' }, childReader)).to.equal(1);
      expect(await count({ orgId: org, ownerId: 'alice' }, t.admin)).to.equal(2);
    });

    it('refuses another organization (403), bad criteria (400) and a missing token (401)', async () => {
      expectErrorBody(await readerA.post('/license/count', { orgId: orgB }), 403);
      expectErrorBody(await readerA.post('/license/count', { state: 'NEW' }), 400);
      expectErrorBody(await readerA.post('/license/count', { type: 'ATC', version: 'x' }), 400);
      expectErrorBody(await t.anon.post('/license/count', {}), 401);
    });
  });
});
