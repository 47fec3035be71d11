/**
 * Every replace that carries a version, as a model: concurrent read-modify-write callers on two
 * instances (one behind the lossy store proxy) in scheduler-chosen orders; each history must be
 * explained by the versioned-register model (test/helpers/model/registers.ts).
 */
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import { registerProperty, type Register } from '../helpers/model/registers.js';

type Rec = Record<string, unknown>;
const doc = (index: string): RegExp => new RegExp(`^PUT /[^/]*-${index}/_doc/`);
const created = (res: { status: number; text: string; body: unknown }, status = 200): Rec => {
  expect(res.status, res.text).to.equal(status);
  return res.body as Rec;
};
const names = ['alpha', 'bravo', 'charlie', 'delta'];

const registers: Register[] = [
  {
    name: 'endpoint PUT (integer version)',
    kind: 'integer',
    write: doc('endpoints'),
    values: names,
    create: async (c, org) => {
      const rec = await c.apps[0].world.endpoint(org);
      return { id: rec.id, rec };
    },
    read: (api, id) => api.get(`/endpoint/${id}`),
    replace: (api, id, rec, value) => api.put(`/endpoint/${id}`, { orgId: rec.orgId, displayName: value, version: rec.version }),
    valueOf: (rec) => String(rec.displayName),
  },
  {
    name: 'UTM endpoint PUT (integer version)',
    kind: 'integer',
    write: doc('endpoints'),
    values: ['MX64', 'MX67', 'MX75', 'MX85'],
    create: async (c, org) => {
      const rec = await c.apps[0].world.utm(org);
      return { id: rec.id, rec };
    },
    read: (api, id) => api.get(`/utm-endpoint/${id}`),
    replace: (api, id, rec, value) => api.put(`/utm-endpoint/${id}`, { ...stripServerFields(rec), model: value }),
    valueOf: (rec) => String(rec.model),
  },
  {
    name: 'LTE endpoint update (integer version)',
    kind: 'integer',
    write: doc('endpoints'),
    values: ['RUT240', 'RUT955', 'RUTX11', 'RUTX50'],
    create: async (c, org) => {
      const rec = await c.apps[0].world.lte(org, { model: 'RUT240' });
      return { id: rec.id, rec };
    },
    read: async (api, id) => api.get(`/endpoint/${id}`),
    replace: (api, _id, rec, value) => api.post('/lte-endpoint/update', { ...stripServerFields(rec), model: value }),
    valueOf: (rec) => String(rec.model),
  },
  {
    name: 'endpoint enabled-modules PUT (integer version)',
    kind: 'integer',
    write: doc('enabled-modules'),
    values: ['PENDING', 'ACTIVE', 'INACTIVE'],
    create: async (c, org) => {
      const ep = await c.apps[0].world.endpoint(org);
      const rec = created(await c.apps[0].admin.post(`/endpoint/${ep.id}/enabled-modules`, { fim: 'PENDING' }));
      return { id: ep.id, rec };
    },
    read: (api, id) => api.get(`/endpoint/${id}/enabled-modules`),
    replace: (api, id, rec, value) => api.put(`/endpoint/${id}/enabled-modules`, { fim: value, version: rec.version }),
    valueOf: (rec) => String(rec.fim),
  },
  {
    name: 'organization enabled-modules PUT (integer version)',
    kind: 'integer',
    write: doc('enabled-modules'),
    values: ['PENDING', 'ACTIVE', 'INACTIVE'],
    create: async (c, org) => {
      const child = await c.apps[0].world.org(org);
      const rec = created(await c.apps[0].admin.post(`/org/${child}/enabled-modules`, { wel: 'PENDING' }));
      return { id: child, rec };
    },
    read: (api, id) => api.get(`/org/${id}/enabled-modules`),
    replace: (api, id, rec, value) => api.put(`/org/${id}/enabled-modules`, { wel: value, version: rec.version }),
    valueOf: (rec) => String(rec.wel),
  },
  {
    name: 'license PUT (integer version)',
    kind: 'integer',
    write: doc('licenses'),
    values: ['owner-1', 'owner-2', 'owner-3', 'owner-4'],
    create: async (c, org) => {
      const id = uid('lic');
      const rec = created(await c.apps[0].admin.put(`/license/${id}`, { type: 'ATC', orgId: org, ownerId: 'owner-0' }));
      return { id, rec };
    },
    read: (api, id) => api.get(`/license/${id}`),
    replace: (api, id, rec, value) => api.put(`/license/${id}`, { type: rec.type, orgId: rec.orgId, ownerId: value, version: rec.version }),
    valueOf: (rec) => String(rec.ownerId),
  },
  {
    name: 'license contract PUT (integer version)',
    kind: 'integer',
    write: doc('org-license-contracts'),
    values: ['10', '20', '30', '40'],
    create: async (c, org) => {
      const child = await c.apps[0].world.org(org);
      const rec = created(await c.apps[0].admin.post('/org-license-contract', { orgId: child, type: 'BDHL', nbrLicensesPurchased: 0 }));
      return { id: child, rec };
    },
    read: (api, id) => api.get(`/org-license-contract/org/${id}/type/BDHL`),
    replace: (api, id, rec, value) =>
      api.put(`/org-license-contract/org/${id}/type/BDHL`, { orgId: rec.orgId, type: rec.type, nbrLicensesPurchased: Number(value), version: rec.version }),
    valueOf: (rec) => String(rec.nbrLicensesPurchased),
  },
  {
    name: 'organization configuration target-version PUT (SeqNoPrimaryTerm read back, no version sent)',
    kind: 'blind',
    write: /^POST \/[^/]*-org-configs\/_update\//,
    values: ['v1.0.0', 'v1.1.0', 'v2.0.0', 'v2.1.0'],
    create: async (c, org) => {
      const child = await c.apps[0].world.org(org);
      created(await c.apps[0].admin.put(`/org-config/${child}/target-version`, { linux: 'v0.9.0', mac: '', windows: '' }));
      return { id: child, rec: created(await c.apps[0].admin.get(`/org-config/${child}`)) };
    },
    read: (api, id) => api.get(`/org-config/${id}`),
    replace: (api, id, _rec, value) => api.put(`/org-config/${id}/target-version`, { linux: value, mac: '', windows: '' }),
    valueOf: (rec) => String(rec.targetVersionLinux ?? rec.linux),
  },
];

/** A record as read, without what the server owns (sent back on a replace). */
function stripServerFields(rec: Rec): Rec {
  const { createdAt, updatedAt, createdBy, updatedBy, ...rest } = rec;
  void createdAt;
  void updatedAt;
  void createdBy;
  void updatedBy;
  return rest;
}

describe('model: replaces carrying a version', () => {
  for (const r of registers) registerProperty(r);
});
