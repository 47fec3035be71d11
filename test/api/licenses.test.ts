import { expect } from 'chai';
import { expectErrorBody, uid, useTenants } from '../helpers/app.js';


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

  async function license(orgId = w.orgA, fields: Record<string, unknown> = {}): Promise<LicenseInfo> {
    const id = uid('lic');
    const res = await w.adminA.put<LicenseInfo>(`/license/${id}`, { type: 'ATC', orgId, ...fields });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  const w = useTenants();

  describe('PATCH /license/{id}/state/{licenseState}: every pair of states', () => {
    for (const from of STATES) {
      for (const to of STATES) {
        const allowed = ALLOWED.has(`${from}>${to}`);
        it(`${from} → ${to}: ${allowed ? '200' : '409'}`, async () => {
          const lic = await license();
          for (const step of PATH_TO[from]) {
            expect((await w.adminA.patch(`/license/${lic.id}/state/${step}`)).status).to.equal(200);
          }
          const before = (await w.readerA.get<LicenseInfo>(`/license/${lic.id}`)).body;
          expect(before.state).to.equal(from);
          const res = await w.adminA.patch<LicenseInfo>(`/license/${lic.id}/state/${to}`);
          if (allowed) {
            expect(res.status, JSON.stringify(res.body)).to.equal(200);
            expect(res.body.state).to.equal(to);
            expect(res.body.version).to.equal(before.version + 1);
            const stamp = STAMP[to] as keyof LicenseInfo;
            expect(Date.parse(res.body[stamp] as string)).to.be.closeTo(Date.now(), 60_000);
            expect(res.body[stamp]).to.not.equal(before[stamp]);
            if (to === 'ACTIVATED') expect(res.body.lastActiveDate).to.equal(res.body.activationDate);
            expect((await w.readerA.get(`/license/${lic.id}`)).body).to.deep.equal(res.body);
          } else {
            expectErrorBody(res, 409, `/endpoint-control-service/v1/license/${lic.id}/state/${to}`);
            expect((await w.readerA.get(`/license/${lic.id}`)).body).to.deep.equal(before);
          }
        });
      }
    }
  });

  describe('PATCH refusals', () => {
    it('an unknown state is 400, an unknown license 404, a reader or another org 403, no token 401', async () => {
      const lic = await license();
      expectErrorBody(await w.adminA.patch(`/license/${lic.id}/state/SUSPENDED`), 400);
      expectErrorBody(await w.adminA.patch(`/license/${lic.id}/state/activated`), 400);
      expectErrorBody(await w.adminA.patch(`/license/${uid('nope')}/state/ACTIVATED`), 404);
      expectErrorBody(await w.readerA.patch(`/license/${lic.id}/state/ACTIVATED`), 403);
      expectErrorBody(await w.adminB.patch(`/license/${lic.id}/state/ACTIVATED`), 403);
      expectErrorBody(await w.t.anon.patch(`/license/${lic.id}/state/ACTIVATED`), 401);
      expect((await w.readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.state).to.equal('CREATED');
    });
  });

  describe('PUT /license/{id}', () => {
    it('creates a license in CREATED with creationDate and version 1; GET answers it', async () => {
      const id = uid('lic');
      const res = await w.adminA.put<LicenseInfo>(`/license/${id}`, {
        type: 'BDHL',
        orgId: w.childA,
        ownerId: 'owner-1',
        daysInactiveBeforeDeactivation: 30,
        activationDate: '2020-01-01T00:00:00.000Z',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ id, state: 'CREATED', type: 'BDHL', orgId: w.childA, ownerId: 'owner-1', daysInactiveBeforeDeactivation: 30, version: 1 });
      expect(res.body).to.not.have.property('activationDate');
      expect(Date.parse(res.body.creationDate)).to.be.closeTo(Date.now(), 60_000);
      expect((await w.readerA.get(`/license/${id}`)).body).to.deep.equal(res.body);
    });

    it('replaces the fields, keeps state and dates, bumps the version; a stale version is 409', async () => {
      const lic = await license(w.orgA, { ownerId: 'first' });
      const activated = (await w.adminA.patch<LicenseInfo>(`/license/${lic.id}/state/ACTIVATED`)).body;
      const res = await w.adminA.put<LicenseInfo>(`/license/${lic.id}`, {
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
      expectErrorBody(await w.adminA.put(`/license/${lic.id}`, { ...activated, ownerId: 'late' }), 409);
      expect((await w.readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.version).to.equal(activated.version + 1);
    });

    it('cannot change the state: a different state is 409, the same state is fine', async () => {
      const lic = await license();
      expectErrorBody(await w.adminA.put(`/license/${lic.id}`, { ...lic, state: 'ACTIVATED' }), 409);
      expect((await w.adminA.put<LicenseInfo>(`/license/${lic.id}`, { ...lic, state: 'CREATED' })).body.version).to.equal(2);
      expectErrorBody(await w.adminA.put(`/license/${uid('lic')}`, { type: 'ATC', orgId: w.orgA, state: 'ACTIVATED' }), 409);
      expectErrorBody(await w.adminA.put(`/license/${uid('lic')}`, { type: 'ATC', orgId: w.orgA, version: 3 }), 409);
      expect((await w.readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.state).to.equal('CREATED');
    });

    it('refuses bad bodies (400), an unregistered organization (404), readers and foreign orgs (403)', async () => {
      const id = uid('lic');
      expectErrorBody(await w.adminA.put(`/license/${id}`, { type: 'XYZ', orgId: w.orgA }), 400);
      expectErrorBody(await w.adminA.put(`/license/${id}`, { type: 'ATC' }), 400);
      expectErrorBody(await w.adminA.put(`/license/${id}`, { type: 'ATC', orgId: w.orgA, state: 'NEW' }), 400);
      expectErrorBody(await w.adminA.put(`/license/${id}`, { type: 'ATC', orgId: w.orgA, daysInactiveBeforeDeactivation: -1 }), 400);
      expectErrorBody(await w.adminA.put(`/license/${id}`, { id: 'other', type: 'ATC', orgId: w.orgA }), 400);
      expectErrorBody(await w.adminA.put(`/license/${id}`), 400);
      expectErrorBody(await w.t.admin.put(`/license/${id}`, { type: 'ATC', orgId: uid('ghost') }), 404);
      expectErrorBody(await w.readerA.put(`/license/${id}`, { type: 'ATC', orgId: w.orgA }), 403);
      expectErrorBody(await w.adminB.put(`/license/${id}`, { type: 'ATC', orgId: w.orgA }), 403);
      expectErrorBody(await w.adminA.get(`/license/${id}`), 404);
      // Moving a license out of reach, or taking one from another org, is refused too.
      const lic = await license();
      expectErrorBody(await w.adminA.put(`/license/${lic.id}`, { type: 'ATC', orgId: w.orgB }), 403);
      expectErrorBody(await w.adminB.put(`/license/${lic.id}`, { type: 'ATC', orgId: w.orgB }), 403);
      expect((await w.readerA.get<LicenseInfo>(`/license/${lic.id}`)).body.orgId).to.equal(w.orgA);
    });
  });

  describe('GET /license/{id}', () => {
    it('is 404 for an unknown id, 403 from another org, 401 without a token', async () => {
      const lic = await license(w.childA);
      expectErrorBody(await w.readerA.get(`/license/${uid('nope')}`), 404);
      expectErrorBody(await w.adminB.get(`/license/${lic.id}`), 403);
      expectErrorBody(await w.t.anon.get(`/license/${lic.id}`), 401);
      expect((await w.t.admin.get<LicenseInfo>(`/license/${lic.id}`)).body.orgId).to.equal(w.childA);
    });
  });

  describe('POST /license/count', () => {
    it('counts the licenses matching every given criterion, within the caller subtree', async () => {
      const org = await w.t.world.org();
      const child = await w.t.world.org(org);
      const admin = w.t.world.as(await w.t.world.token('admin', org));
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
      const childReader = w.t.world.as(await w.t.world.token('reader', child));
      expect(await count({ ownerId: 'alice' }, childReader)).to.equal(1);
      expect(await count({ orgId: org, ownerId: 'alice' }, w.t.admin)).to.equal(2);
    });

    it('refuses another organization (403), bad criteria (400) and a missing token (401)', async () => {
      expectErrorBody(await w.readerA.post('/license/count', { orgId: w.orgB }), 403);
      expectErrorBody(await w.readerA.post('/license/count', { state: 'NEW' }), 400);
      expectErrorBody(await w.readerA.post('/license/count', { type: 'ATC', version: 'x' }), 400);
      expectErrorBody(await w.t.anon.post('/license/count', {}), 401);
    });
  });
});
