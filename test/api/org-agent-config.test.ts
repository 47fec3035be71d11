import { expect } from 'chai';
import { expectErrorBody, uid, useTenants } from '../helpers/app.js';
import { P } from '../helpers/http.js';

interface StoredConfig {
  orgId: string;
  fields: Record<string, unknown>;
  createdAt: string;
  createdBy: { username: string; authenticator: string };
  updatedAt: string;
  updatedBy: { username: string; authenticator: string };
}

const FULL_FIELDS = {
  dynamicModules: ['fim', 'iocDetection'],
  enableFim: true,
  enableWindowsEventLog: true,
  commUrl: 'wss://gateway.example.com/agent',
  commKeepAliveSeconds: 30,
  commMinRetryDelaySeconds: 5,
  commMaxRetryDelaySeconds: 300,
  commMaxRetries: 0,
  journalFileName: 'journal.db',
  journalMaxSizeMB: 100,
  journalMaxBackups: 3,
  journalMaxAgeDays: 14,
  loggingFileName: 'agent.log',
  loggingMaxSizeMB: 50,
  windowsEventLogs: [
    { name: 'Security', api: 'wineventlog' },
    { name: 'Microsoft-Windows-Sysmon/Operational', api: 'wineventlog' },
  ],
  windowsEventIgnores: [{ product: 'Microsoft-Windows-Security-Auditing', eventId: 4662 }],
  loggingLevel: 'debug',
  scanIntervalMinutes: 15,
  telemetry: false,
};

describe('organization agent configuration (spec 4.9)', () => {

  const w = useTenants();

  it('POST answers 201 with the stored Config; GET reads it back', async () => {
    const res = await w.adminA.post<StoredConfig>('/config/org', { orgId: w.childA, fields: FULL_FIELDS });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.orgId).to.equal(w.childA);
    expect(res.body.fields).to.deep.equal(FULL_FIELDS);
    expect(res.body.createdBy.username).to.equal(`admin-${w.orgA}`);
    expect(res.body.createdAt).to.equal(res.body.updatedAt);
    const got = await w.readerA.get<StoredConfig>(`/config/org/${w.childA}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(res.body);
  });

  it('a second POST replaces the fields and keeps the creation stamp', async () => {
    const org = await w.t.world.org(w.orgA);
    const first = await w.adminA.post<StoredConfig>('/config/org', { orgId: org, fields: { enableFim: true, journalMaxBackups: 2 } });
    const second = await w.t.admin.post<StoredConfig>('/config/org', { orgId: org, fields: { enableFim: false } });
    expect(second.status).to.equal(201);
    expect(second.body.fields).to.deep.equal({ enableFim: false });
    expect(second.body.createdAt).to.equal(first.body.createdAt);
    expect(second.body.createdBy).to.deep.equal(first.body.createdBy);
    expect(second.body.updatedBy.username).to.equal('bootstrap-admin');
    expect((await w.readerA.get<StoredConfig>(`/config/org/${org}`)).body.fields).to.deep.equal({ enableFim: false });
  });

  it('commUrl may be wss or https; empty fields are a valid configuration', async () => {
    const org = await w.t.world.org(w.orgA);
    for (const commUrl of ['wss://g.example.com', 'https://g.example.com/agent']) {
      expect((await w.adminA.post('/config/org', { orgId: org, fields: { commUrl } })).status).to.equal(201);
    }
    expect((await w.adminA.post('/config/org', { orgId: org, fields: {} })).status).to.equal(201);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['min retry delay above max', { commMinRetryDelaySeconds: 60, commMaxRetryDelaySeconds: 10 }, 'commMinRetryDelaySeconds'],
    ['negative size', { journalMaxSizeMB: -1 }, 'journalMaxSizeMB'],
    ['negative count', { commMaxRetries: -3 }, 'commMaxRetries'],
    ['fractional count', { journalMaxBackups: 1.5 }, 'journalMaxBackups'],
    ['beyond int32', { loggingMaxSizeMB: 2 ** 31 }, 'loggingMaxSizeMB'],
    ['string where a number goes', { commKeepAliveSeconds: 'thirty' }, 'commKeepAliveSeconds'],
    ['http commUrl', { commUrl: 'http://g.example.com' }, 'commUrl'],
    ['ws commUrl', { commUrl: 'ws://g.example.com' }, 'commUrl'],
    ['non-boolean flag', { enableFim: 'maybe' }, 'enableFim'],
    ['dynamicModules not an array', { dynamicModules: 'fim' }, 'dynamicModules'],
    ['event log without api', { windowsEventLogs: [{ name: 'Security' }] }, 'api'],
    ['ignore with a non-integer eventId', { windowsEventIgnores: [{ product: 'p', eventId: 'x' }] }, 'eventId'],
    ['ignore without product', { windowsEventIgnores: [{ eventId: 1 }] }, 'product'],
    ['non-scalar extra entry', { extra: { nested: true } }, 'extra'],
    ['extra entry with an odd name', { '1st': 'x' }, '1st'],
    ['extra entry named like a template', { '{x}': 1 }, "a further entry's name"],
    ['over-long extra string', { note: 'x'.repeat(4097) }, 'note'],
    ['empty file name', { loggingFileName: '' }, 'loggingFileName'],
  ];
  for (const [what, fields, named] of invalid) {
    it(`400 for ${what}`, async () => {
      const res = await w.adminA.post('/config/org', { orgId: w.childA, fields });
      expectErrorBody(res, 400, `${P}/config/org`);
      expect((res.body as { message: string }).message).to.contain(named);
    });
  }

  it('400 without orgId or fields, and for an unregistered org; nothing is stored by a refused POST', async () => {
    const org = await w.t.world.org(w.orgA);
    expectErrorBody(await w.adminA.post('/config/org', { fields: {} }), 400);
    expectErrorBody(await w.adminA.post('/config/org', { orgId: org }), 400);
    expectErrorBody(await w.adminA.post('/config/org', { orgId: org, fields: { journalMaxSizeMB: -1 } }), 400);
    expectErrorBody(await w.t.admin.post('/config/org', { orgId: uid('ghost'), fields: {} }), 400);
    expectErrorBody(await w.readerA.get(`/config/org/${org}`), 404);
  });

  it('authorization: 403 outside the subtree and for a reader; 401 without a token', async () => {
    expectErrorBody(await w.adminB.post('/config/org', { orgId: w.orgA, fields: {} }), 403);
    expectErrorBody(await w.readerA.post('/config/org', { orgId: w.orgA, fields: {} }), 403);
    expectErrorBody(await w.t.anon.post('/config/org', { orgId: w.orgA, fields: {} }), 401);
    expectErrorBody(await w.adminB.get(`/config/org/${w.childA}`), 403);
    expectErrorBody(await w.t.anon.get(`/config/org/${w.childA}`), 401);
    expectErrorBody(await w.t.admin.get(`/config/org/${uid('ghost')}`), 404);
  });
});
