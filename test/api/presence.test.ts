/**
 * Presence: signs of life stamp lastSeen; a CONNECTED endpoint not seen for
 * its presence timeout reads POTENTIALLY_DISCONNECTED in gets, searches, counts and the status
 * aggregations. The app runs with a presence timeout of a few seconds; tests wait on conditions.
 */
import { expect } from 'chai';
import { startTestApp, uid, type EndpointRecord, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

const TIMEOUT_S = 4;
/** Long enough for a stale endpoint to turn stale on a loaded machine. */
const DEADLINE_MS = 30_000;

interface Page<T> {
  totalCount: number;
  items: T[];
}
type Bucket = { key: string; count: number };

describe('presence: last seen and POTENTIALLY_DISCONNECTED', () => {
  let t: TestApp;
  let org: string;
  let longOrg: string;
  let orgB: string;
  let adminA: Api;
  let adminB: Api;

  before(async function () {
    // A loaded machine may take a while to set a fresh app's indices up.
    this.timeout(120_000);
    t = await startTestApp({ ECS_PRESENCE_TIMEOUT: String(TIMEOUT_S) });
    [org, longOrg, orgB] = await Promise.all([t.world.org(), t.world.org(), t.world.org()]);
    adminA = t.world.as(await t.world.token('admin', org));
    adminB = t.world.as(await t.world.token('admin', orgB));
    // longOrg overrides the timeout (an hour) through its agent configuration.
    const res = await t.admin.post('/config/org', { orgId: longOrg, fields: { presenceTimeoutSeconds: 3600 } });
    expect(res.status, res.text).to.equal(201);
    expect((res.body as { fields: Record<string, unknown> }).fields.presenceTimeoutSeconds).to.equal(3600);
  });
  after(() => t.close());

  const get = async (id: string): Promise<EndpointRecord> => {
    const res = await t.admin.get<EndpointRecord>(`/endpoint/${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const connect = async (id: string, as: Api = t.admin): Promise<void> => {
    const res = await as.post(`/endpoint/${id}/connect`);
    expect(res.status, res.text).to.equal(204);
  };
  const search = async (criteria: Record<string, unknown>): Promise<string[]> => {
    const res = await t.admin.post<Page<EndpointRecord>>('/endpoint/page-search', { criteria, pageRequest: { page: 0, size: 100 } });
    expect(res.status, res.text).to.equal(200);
    return res.body.items.map((e) => e.id).sort();
  };
  const statusCounts = async (path: string, criteria: Record<string, unknown>): Promise<Record<string, number>> => {
    const res = await t.admin.post<Bucket[]>(path, criteria);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.every((b) => b.count > 0)).to.equal(true);
    return { CONNECTED: 0, POTENTIALLY_DISCONNECTED: 0, DISCONNECTED: 0, NEVER: 0, UNINSTALLED: 0, ...Object.fromEntries(res.body.map((b) => [b.key, b.count])) };
  };
  const staleIn = async (id: string): Promise<EndpointRecord> => {
    const w = await waitFor(() => get(id), (r) => r.connectionStatus === 'POTENTIALLY_DISCONNECTED', DEADLINE_MS, 250);
    expect(w.met, `still ${w.value.connectionStatus}`).to.equal(true);
    return w.value;
  };

  it('connect stamps lastSeen; not seen for the timeout it reads POTENTIALLY_DISCONNECTED in get, search, aggregation; a sign of life brings it back', async () => {
    const before = Date.now();
    const e = await t.world.endpoint(org);
    expect(e.lastSeen).to.equal(undefined);
    await connect(e.id);
    const fresh = await get(e.id);
    expect(Date.parse(fresh.lastSeen as string)).to.be.within(before - 1000, Date.now() + 1000);
    // Read within the timeout (the read itself took less): CONNECTED.
    if (Date.now() - Date.parse(fresh.lastSeen as string) < TIMEOUT_S * 1000) expect(fresh.connectionStatus).to.equal('CONNECTED');

    const stale = await staleIn(e.id);
    expect(stale.lastSeen).to.equal(fresh.lastSeen);
    // Searches decide it from lastSeen at query time, the same way.
    const w = await waitFor(
      () => search({ orgId: org, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] }),
      (ids) => ids.includes(e.id),
      DEADLINE_MS,
      250,
    );
    expect(w.met).to.equal(true);
    expect(await search({ orgId: org, connectionStatuses: ['CONNECTED'] })).to.not.include(e.id);
    expect(await search({ orgId: org, connectionStatuses: ['CONNECTED', 'POTENTIALLY_DISCONNECTED'] })).to.include(e.id);
    const counts = await statusCounts('/endpoint/connection-status/aggregation', { orgId: org });
    expect(counts.POTENTIALLY_DISCONNECTED).to.be.at.least(1);

    // A heartbeat of its sensor is a sign of life: CONNECTED again, everywhere.
    const hb = await t.admin.post('/network-heartbeat', {
      endpointId: e.id,
      orgId: org,
      externalAddress: '203.0.113.7',
      networkAddress: '10.20.0.0',
      hostAddress: '10.20.0.9',
      subnetMask: '255.255.255.0',
      defaultGateway: '10.20.0.1',
      operatingSystem: 'linux',
      pcapVersion: 'libpcap 1.10.4',
    });
    expect(hb.status, hb.text).to.equal(201);
    const back = await get(e.id);
    expect(Date.parse(back.lastSeen as string)).to.be.greaterThan(Date.parse(fresh.lastSeen as string));
    const live = await waitFor(
      () => search({ orgId: org, connectionStatuses: ['CONNECTED'] }),
      (ids) => ids.includes(e.id),
      DEADLINE_MS,
      100,
    );
    // Either it was seen as CONNECTED, or it went stale again before the search saw the write (a loaded machine).
    expect(live.met || (await get(e.id)).connectionStatus === 'POTENTIALLY_DISCONNECTED').to.equal(true);
  });

  it('counts by status: a stale CONNECTED endpoint moves from the CONNECTED bucket to POTENTIALLY_DISCONNECTED, and the totals agree with the searches', async () => {
    const o = await t.world.org();
    const [a, b, c] = await Promise.all([t.world.endpoint(o), t.world.endpoint(o), t.world.endpoint(o, { connectionStatus: 'DISCONNECTED' })]);
    await Promise.all([connect(a.id), connect(b.id)]);
    await staleIn(a.id);
    await staleIn(b.id);
    const w = await waitFor(
      () => statusCounts('/endpoint/connection-status/aggregation', { orgId: o }),
      (n) => n.POTENTIALLY_DISCONNECTED === 2,
      DEADLINE_MS,
      250,
    );
    expect(w.value).to.deep.equal({ CONNECTED: 0, POTENTIALLY_DISCONNECTED: 2, DISCONNECTED: 1, NEVER: 0, UNINSTALLED: 0 });
    expect(await search({ orgId: o, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] })).to.deep.equal([a.id, b.id].sort());
    expect(await search({ orgId: o, connectionStatuses: ['DISCONNECTED'] })).to.deep.equal([c.id]);
    // showInactiveEndpoints: false keeps endpoints seen within the window (lastSeen counts as activity).
    expect(await search({ orgId: o, showInactiveEndpoints: false })).to.deep.equal([a.id, b.id].sort());
  });

  it("an organization's agent configuration overrides the timeout (presenceTimeoutSeconds): its endpoints stay CONNECTED", async () => {
    const [short, long] = await Promise.all([t.world.endpoint(org), t.world.endpoint(longOrg)]);
    await Promise.all([connect(short.id), connect(long.id)]);
    await staleIn(short.id);
    expect((await get(long.id)).connectionStatus).to.equal('CONNECTED');
    const w = await waitFor(
      () => search({ orgId: longOrg, connectionStatuses: ['CONNECTED'] }),
      (ids) => ids.includes(long.id),
      DEADLINE_MS,
      100,
    );
    expect(w.met).to.equal(true);
    expect(await search({ orgId: longOrg, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] })).to.not.include(long.id);
    expect((await statusCounts('/endpoint/connection-status/aggregation', { orgId: longOrg })).CONNECTED).to.be.at.least(1);
  });

  it('UTM count, search and status aggregation apply presence to the connectionStatuses filter', async () => {
    const o = await t.world.org();
    const u = await t.world.utm(o, { model: 'MX64' });
    await connect(u.id);
    const stale = await waitFor(
      () => t.admin.post<{ count: number }>('/utm-endpoint/count', { orgId: o, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] }),
      (r) => r.body.count === 1,
      DEADLINE_MS,
      250,
    );
    expect(stale.met).to.equal(true);
    expect((await t.admin.post<{ count: number }>('/utm-endpoint/count', { orgId: o, connectionStatuses: ['CONNECTED'] })).body.count).to.equal(0);
    const page = await t.admin.post<Page<EndpointRecord>>('/utm-endpoint/searchPage', {
      criteria: { orgId: o, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] },
      pageRequest: { page: 0, size: 10 },
    });
    expect(page.body.items.map((r) => [r.id, r.connectionStatus])).to.deep.equal([[u.id, 'POTENTIALLY_DISCONNECTED']]);
    expect(await statusCounts('/utm-endpoint/connection-status/aggregation', { orgId: o })).to.include({ CONNECTED: 0, POTENTIALLY_DISCONNECTED: 1 });
  });

  // Folded in from the console's former GET /endpoint/connection-status/aggregation.
  it("status aggregations count live records within the caller's subtree: deleted ones and other tenants' not; UTM takes includeChildren; 403/401", async () => {
    const msp = await t.world.org();
    const [cust, other] = await Promise.all([t.world.org(msp), t.world.org()]);
    const reader = t.world.as(await t.world.token('reader', msp));
    const counts = async (path: string, body: Record<string, unknown>): Promise<Record<string, number>> => {
      const res = await reader.post<Bucket[]>(path, body);
      expect(res.status, res.text).to.equal(200);
      return Object.fromEntries(res.body.map((b) => [b.key, b.count]));
    };
    const [, , gone] = await Promise.all([t.world.endpoint(msp), t.world.endpoint(msp, { connectionStatus: 'DISCONNECTED' }), t.world.endpoint(msp), t.world.endpoint(other)]);
    const utms = await Promise.all([t.world.utm(msp), t.world.utm(cust), t.world.utm(other)]);
    for (const u of utms) expect((await t.admin.patch(`/utm-endpoint/${u.id}/connectionStatus/DISCONNECTED`)).status).to.equal(200);
    expect((await t.admin.delete(`/endpoint/${gone.id}`)).status).to.be.oneOf([200, 204]);
    expect(await counts('/endpoint/connection-status/aggregation', { orgId: msp })).to.deep.equal({ DISCONNECTED: 1, NEVER: 1 });
    expect(await counts('/utm-endpoint/connection-status/aggregation', { orgId: msp })).to.deep.equal({ DISCONNECTED: 1 });
    expect(await counts('/utm-endpoint/connection-status/aggregation', { orgId: msp, includeChildren: true })).to.deep.equal({ DISCONNECTED: 2 });
    expect((await reader.post('/endpoint/connection-status/aggregation', { orgId: other })).status).to.equal(403);
    expect((await reader.post('/utm-endpoint/connection-status/aggregation', { orgId: other, includeChildren: true })).status).to.equal(403);
    expect((await t.anon.post('/endpoint/connection-status/aggregation', {})).status).to.equal(401);
  });

  it('exports, cursor pages and jobs apply presence as the page search does (deep paging and jobs from integ)', async function () {
    this.timeout(90_000);
    const o = await t.world.org();
    const [a, b] = await Promise.all([t.world.endpoint(o), t.world.endpoint(o)]);
    await connect(a.id);
    await staleIn(a.id);
    const criteria = { orgId: o, connectionStatuses: ['POTENTIALLY_DISCONNECTED'] };
    const exp = await t.admin.post('/endpoint/page-search/export', { criteria });
    expect(exp.status, exp.text).to.equal(200);
    const rows = exp.text.trim().split('\n').map((l) => JSON.parse(l) as EndpointRecord);
    expect(rows.map((r) => [r.id, r.connectionStatus])).to.deep.equal([[a.id, 'POTENTIALLY_DISCONNECTED']]);
    const all = await t.admin.post('/endpoint/page-search/export', { criteria: { orgId: o } });
    const byId = Object.fromEntries(all.text.trim().split('\n').map((l) => JSON.parse(l) as EndpointRecord).map((r) => [r.id, r.connectionStatus]));
    expect(byId).to.deep.equal({ [a.id]: 'POTENTIALLY_DISCONNECTED', [b.id]: 'NEVER' });
    const cursorPage = await t.admin.post<Page<EndpointRecord>>('/endpoint/page-search?cursor=start', { criteria, pageRequest: { page: 0, size: 10 } });
    expect(cursorPage.status, cursorPage.text).to.equal(200);
    expect(cursorPage.body.items.map((r) => [r.id, r.connectionStatus])).to.deep.equal([[a.id, 'POTENTIALLY_DISCONNECTED']]);
    // A job over the stale agents matches exactly them (its scan builds the page search's query).
    const job = await t.admin.post<{ id: string }>('/jobs', { action: { type: 'SOFT_DELETE' }, criteria });
    expect(job.status, job.text).to.equal(202);
    const done = await waitFor(
      () => t.admin.get<{ state: string; matched: number; done: number }>(`/jobs/${job.body.id}`),
      (r) => r.body.state === 'DONE',
      60_000,
      200,
    );
    expect(done.value.body).to.include({ state: 'DONE', matched: 1, done: 1 });
    expect((await t.admin.get(`/endpoint/${b.id}`)).status).to.equal(200);
  });

  it('legacy records without lastSeen keep their stored status (CONNECTED stays CONNECTED)', async () => {
    const legacy = await t.world.endpoint(org, { connectionStatus: 'CONNECTED', lastConnect: '2020-01-01T00:00:00.000Z' });
    const other = await t.world.endpoint(org);
    await connect(other.id);
    await staleIn(other.id);
    const r = await get(legacy.id);
    expect(r.connectionStatus).to.equal('CONNECTED');
    expect(r.lastSeen).to.equal(undefined);
    const w = await waitFor(() => search({ orgId: org, connectionStatuses: ['CONNECTED'] }), (ids) => ids.includes(legacy.id), DEADLINE_MS, 100);
    expect(w.met).to.equal(true);
  });

  it('inventory reports, address reports and command statuses reported by the agent are signs of life; a PUT keeps lastSeen', async () => {
    const e = await t.world.endpoint(org, { hostInfo: { os: 'linux', hostName: uid('h') } });
    const agent = t.world.as(await t.world.token('agent', org, e.id));
    await connect(e.id, agent);
    const first = (await get(e.id)).lastSeen as string;
    const later = async (): Promise<string> => {
      const w = await waitFor(() => get(e.id), (r) => (r.lastSeen as string) > first, 5_000, 50);
      expect(w.met, 'lastSeen did not move').to.equal(true);
      return w.value.lastSeen as string;
    };
    // Each report comes after the window within which an instance does not stamp the same endpoint twice (a tenth of the timeout).
    const pastWindow = (stamp: string) => waitFor(async () => Date.now(), (n) => n > Date.parse(stamp) + TIMEOUT_S * 100 + 50, 5_000, 10);
    await pastWindow(first);
    const inv = await agent.post(`/endpoint/${e.id}/software-inventory`, [{ name: 'curl', version: '8.0' }]);
    expect(inv.status, inv.text).to.equal(201);
    const afterInventory0 = await later();
    await pastWindow(afterInventory0);
    const addr = await agent.patch(`/endpoint/${e.id}/internal-ips/10.0.0.5/external-ip/203.0.113.9`);
    expect(addr.status, addr.text).to.equal(204);
    const w0 = await waitFor(() => get(e.id), (r) => (r.lastSeen as string) > afterInventory0, 5_000, 50);
    expect(w0.met, 'an address report did not stamp lastSeen').to.equal(true);
    const afterInventory = w0.value.lastSeen as string;

    const msg = await t.admin.post<{ id: string }>(`/command-message/endpoint/${e.id}`, { module: 'cmd', name: 'ping' });
    expect(msg.status, msg.text).to.equal(201);
    await pastWindow(afterInventory);
    const moved = await agent.patch(`/command-message/${msg.body.id}/status/SENT`);
    expect(moved.status, moved.text).to.equal(200);
    const w = await waitFor(() => get(e.id), (r) => (r.lastSeen as string) > afterInventory, 5_000, 50);
    expect(w.met, 'a status reported by the agent did not stamp lastSeen').to.equal(true);

    const seen = w.value.lastSeen;
    const put = await t.admin.put<EndpointRecord>(`/endpoint/${e.id}`, { orgId: org, displayName: 'renamed' });
    expect(put.status, put.text).to.equal(200);
    expect(put.body.lastSeen).to.equal(seen);
    // lastSeen is the server's: a body carrying it is ignored.
    const forged = await t.admin.put<EndpointRecord>(`/endpoint/${e.id}`, { orgId: org, lastSeen: '2030-01-01T00:00:00.000Z' });
    expect(forged.status, forged.text).to.equal(200);
    expect(forged.body.lastSeen).to.equal(seen);
  });

  it('signs of life within a tenth of the timeout of the last stamp are not written again (one instance)', async () => {
    const e = await t.world.endpoint(org);
    const agent = t.world.as(await t.world.token('agent', org, e.id));
    await connect(e.id, agent);
    const connected = Date.parse((await get(e.id)).lastSeen as string);
    await waitFor(async () => Date.now(), (n) => n > connected + TIMEOUT_S * 100 + 50, 5_000, 10);
    const report = () => agent.post(`/endpoint/${e.id}/software-inventory`, [{ name: 'curl', version: '8.0' }]);
    const t0 = Date.now();
    expect((await report()).status).to.equal(201);
    const stamped = (await get(e.id)).lastSeen as string;
    expect(Date.parse(stamped)).to.be.at.least(t0 - 5);
    expect((await report()).status).to.equal(201);
    // Only meaningful when the second report came within the window (a loaded machine may be slower).
    if (Date.now() - Date.parse(stamped) < TIMEOUT_S * 100) expect((await get(e.id)).lastSeen).to.equal(stamped);
  });

  it("a heartbeat naming another tenant's endpoint does not stamp it", async () => {
    const victim = await t.world.endpoint(orgB);
    await connect(victim.id, adminB);
    const stamp = (await get(victim.id)).lastSeen as string;
    await waitFor(async () => Date.now(), (n) => n > Date.parse(stamp) + TIMEOUT_S * 100 + 50, 5_000, 10);
    const hb = await adminA.post('/network-heartbeat', {
      endpointId: victim.id,
      orgId: org,
      externalAddress: '203.0.113.7',
      networkAddress: '10.20.0.0',
      hostAddress: '10.20.0.10',
      subnetMask: '255.255.255.0',
      defaultGateway: '10.20.0.1',
      operatingSystem: 'linux',
      pcapVersion: 'libpcap 1.10.4',
    });
    expect(hb.status, hb.text).to.equal(201);
    expect((await get(victim.id)).lastSeen).to.equal(stamp);
    // A system token's heartbeat naming no endpoint at all is stored as before.
    const unknown = await t.admin.post('/network-heartbeat', {
      endpointId: uid('sensor'),
      orgId: org,
      externalAddress: '203.0.113.7',
      networkAddress: '10.20.0.0',
      hostAddress: '10.20.0.11',
      subnetMask: '255.255.255.0',
      defaultGateway: '10.20.0.1',
      operatingSystem: 'linux',
      pcapVersion: 'libpcap 1.10.4',
    });
    expect(unknown.status, unknown.text).to.equal(201);
  });

  it('the OpenAPI document marks the presence extensions', async () => {
    const doc = (await t.anon.get<{ paths: Record<string, Record<string, Record<string, unknown>>>; components: unknown }>('/openapi.json')).body;
    const agg = doc.paths['/endpoint-control-service/v1/endpoint/connection-status/aggregation']?.post;
    expect(agg?.['x-extension']).to.equal(true);
    expect(doc.paths['/endpoint-control-service/v1/utm-endpoint/connection-status/aggregation']?.post?.['x-extension']).to.equal(true);
    const config = JSON.stringify(doc.components);
    expect(config).to.include('presenceTimeoutSeconds').and.match(/"presenceTimeoutSeconds":\{[^}]*"x-extension":true/);
  });
});
