import { expect } from 'chai';
import { expectErrorBody, uid, useTenants } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

interface NetworkHost {
  id: string;
  orgId: string;
  ipAddress: string;
  macAddress?: string;
  macVendor?: string;
  lastSeen: string;
  status: 'NONE' | 'KNOWN' | 'UNKNOWN';
}
interface Page<T> {
  pageRequest: { page: number; size: number };
  totalCount: number;
  totalPages: number;
  items: T[];
}

describe('network heartbeats and hosts (spec 4.9)', () => {

  const w = useTenants();

  async function hostsOf(orgId: string, criteria: Record<string, unknown> = {}, as: Api = w.readerA): Promise<NetworkHost[]> {
    const res = await as.post<Page<NetworkHost>>('/network-host/search-page', { criteria: { orgId, ...criteria }, pageRequest: { size: 100 } });
    expect(res.status, res.text).to.equal(200);
    return res.body.items;
  }

  function heartbeat(orgId: string, hostAddress: string, timestamp: string, endpointId = uid('sensor')): Record<string, string> {
    return {
      endpointId,
      orgId,
      externalAddress: '203.0.113.7',
      networkAddress: '10.20.0.0',
      hostAddress,
      subnetMask: '255.255.255.0',
      defaultGateway: '10.20.0.1',
      operatingSystem: 'linux',
      pcapVersion: 'libpcap 1.10.4',
      timestamp,
    };
  }

  describe('heartbeats', () => {
    it('201 with the stored heartbeat; readable by endpoint, newest first, within a time range', async () => {
      const sensor = uid('sensor');
      const hb1 = heartbeat(w.childA, '10.20.0.5', '2024-05-01T10:00:00.000Z', sensor);
      const res = await w.adminA.post('/network-heartbeat', hb1);
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.deep.equal(hb1);
      await w.adminA.post('/network-heartbeat', heartbeat(w.childA, '10.20.0.5', '2024-05-01T10:01:00+00:00', sensor));
      await w.adminA.post('/network-heartbeat', heartbeat(w.childA, '10.20.0.5', '2024-05-01T10:02:00.000Z', sensor));
      // Heartbeats are written without a forced refresh: read until all three are seen.
      const { value: list } = await waitFor(
        () => w.readerA.get<Page<Record<string, string>>>(`/network-heartbeat/endpoint/${sensor}`),
        (r) => r.body.totalCount === 3,
        5_000,
        100,
      );
      expect(list.status).to.equal(200);
      expect(list.body.items.map((h) => h.timestamp)).to.deep.equal([
        '2024-05-01T10:02:00.000Z',
        '2024-05-01T10:01:00.000Z',
        '2024-05-01T10:00:00.000Z',
      ]);
      const ranged = await w.readerA.get<Page<Record<string, string>>>(
        `/network-heartbeat/endpoint/${sensor}?from=2024-05-01T10:01:00Z&to=2024-05-01T10:02:00Z`,
      );
      expect(ranged.body.items.map((h) => h.timestamp)).to.deep.equal(['2024-05-01T10:01:00.000Z']);
      expect((await w.adminB.get<Page<unknown>>(`/network-heartbeat/endpoint/${sensor}`)).body.totalCount).to.equal(0);
    });

    it('accepts IPv6 host addresses and endpoint ids of any allowed length', async () => {
      const longId = 'é'.repeat(256);
      const res = await w.adminA.post('/network-heartbeat', heartbeat(w.childA, '2001:db8::7', '2024-05-03T10:00:00.000Z', longId));
      expect(res.status, res.text).to.equal(201);
      // The document describes addresses and IPv4 blocks; an IPv6 block is taken by the service beyond it.
      const v6 = await w.readerA.post<Page<NetworkHost>>(
        '/network-host/search-page',
        { criteria: { orgId: w.childA, ipAddress: '2001:db8::/32' }, pageRequest: { size: 100 } },
        { checkRequest: false },
      );
      expect(v6.status, v6.text).to.equal(200);
      expect(v6.body.items).to.have.length(1);
    });

    it('a retried heartbeat (same endpoint and time) is stored once; the timestamp defaults to receipt', async () => {
      const sensor = uid('sensor');
      const hb = heartbeat(w.childA, '10.20.0.6', '2024-05-02T10:00:00.000Z', sensor);
      await w.adminA.post('/network-heartbeat', hb);
      await w.adminA.post('/network-heartbeat', hb);
      const { timestamp: _ts, ...untimed } = heartbeat(w.childA, '10.20.0.6', '', sensor);
      const now = await w.adminA.post<Record<string, string>>('/network-heartbeat', untimed);
      expect(now.status).to.equal(201);
      expect(Date.parse(now.body.timestamp)).to.be.closeTo(Date.now(), 60_000);
      // Once the newest (untimed) heartbeat is visible, the earlier writes are too (one shard, refreshed together).
      const { value: list } = await waitFor(
        () => w.readerA.get<Page<Record<string, string>>>(`/network-heartbeat/endpoint/${sensor}`),
        (r) => r.body.items.some((h) => h.timestamp === now.body.timestamp),
        5_000,
        100,
      );
      expect(list.body.items.map((h) => h.timestamp)).to.deep.equal([now.body.timestamp, hb.timestamp]);
    });

    it('400 for a missing or malformed field; 403 outside the subtree or for a reader; 401 without a token', async () => {
      const hb = heartbeat(w.childA, '10.20.0.7', '2024-05-01T10:00:00.000Z');
      const noHost = await w.adminA.post('/network-heartbeat', { ...hb, hostAddress: undefined });
      expectErrorBody(noHost, 400, `${P}/network-heartbeat`);
      expect((noHost.body as { message: string }).message).to.contain('body.hostAddress');
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, hostAddress: 'not-an-ip' }), 400);
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, timestamp: 'yesterday' }), 400);
      // Forms joi would admit but an Elasticsearch ip or date field refuses are 400, not 500.
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, hostAddress: '010.20.0.7' }), 400);
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, hostAddress: 'fe80::1%eth0' }), 400);
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, timestamp: '+010000-01-01T00:00:00.000Z' }), 400);
      expectErrorBody(await w.adminA.post('/network-heartbeat', { ...hb, orgId: undefined }), 400);
      expectErrorBody(await w.adminA.post('/network-heartbeat'), 400);
      expectErrorBody(await w.adminB.post('/network-heartbeat', hb), 403);
      expectErrorBody(await w.readerA.post('/network-heartbeat', hb), 403);
      expectErrorBody(await w.t.anon.post('/network-heartbeat', hb), 401);
      expect(await hostsOf(w.childA, { ipAddress: '10.20.0.7' })).to.have.length(0);
    });
  });

  describe('heartbeat → network host upsert', () => {
    it('a new host address starts NONE with the heartbeat time as lastSeen', async () => {
      const org = await w.t.world.org(w.orgA);
      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.10', '2024-06-01T12:00:00.000Z'));
      const hosts = await hostsOf(org);
      expect(hosts).to.have.length(1);
      expect(hosts[0]).to.include({ orgId: org, ipAddress: '192.168.1.10', status: 'NONE', lastSeen: '2024-06-01T12:00:00.000Z' });
      expect(hosts[0]).to.not.have.property('macAddress');
    });

    it('lastSeen moves forward only, whatever order heartbeats arrive in; the status set on a known host stays', async () => {
      const org = await w.t.world.org(w.orgA);
      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.20', '2024-06-01T12:00:00.000Z'));
      const [host] = await hostsOf(org);
      const read = async (): Promise<NetworkHost> => (await w.readerA.get<NetworkHost>(`/network-host/${host.id}`)).body;

      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.20', '2024-06-01T12:05:00.000Z'));
      expect((await read()).lastSeen).to.equal('2024-06-01T12:05:00.000Z');
      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.20', '2024-06-01T12:01:00.000Z'));
      expect((await read()).lastSeen).to.equal('2024-06-01T12:05:00.000Z');

      const known = await w.adminA.put<NetworkHost>(`/network-host/${host.id}/status/KNOWN`);
      expect(known.status, known.text).to.equal(200);
      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.20', '2024-06-01T12:10:00.000Z'));
      expect(await read()).to.deep.equal({ ...known.body, lastSeen: '2024-06-01T12:10:00.000Z' });
      // Still one host for the address in this org.
      expect(await hostsOf(org)).to.have.length(1);
    });

    it('concurrent heartbeats for one new address make one host at the latest time', async () => {
      const org = await w.t.world.org(w.orgA);
      const times = Array.from({ length: 8 }, (_, i) => `2024-06-02T00:0${i}:00.000Z`);
      const results = await Promise.all(times.map((ts) => w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.1.30', ts))));
      expect(results.map((r) => r.status)).to.deep.equal(times.map(() => 201));
      const [host, ...rest] = await hostsOf(org);
      expect(rest).to.have.length(0);
      expect((await w.readerA.get<NetworkHost>(`/network-host/${host.id}`)).body.lastSeen).to.equal(times[times.length - 1]);
    });

    it('the same address in another org is another host', async () => {
      const o1 = await w.t.world.org(w.orgA);
      const o2 = await w.t.world.org(w.orgA);
      await w.adminA.post('/network-heartbeat', heartbeat(o1, '192.168.1.40', '2024-06-01T12:00:00.000Z'));
      await w.adminA.post('/network-heartbeat', heartbeat(o2, '192.168.1.40', '2024-06-01T12:00:00.000Z'));
      const [h1] = await hostsOf(o1);
      const [h2] = await hostsOf(o2);
      expect(h1.id).to.not.equal(h2.id);
    });
  });

  describe('network host status', () => {
    it('PUT sets a status and answers the host; bad status 400; unknown id 404; outside 403; reader 403', async () => {
      const org = await w.t.world.org(w.orgA);
      await w.adminA.post('/network-heartbeat', heartbeat(org, '192.168.2.1', '2024-06-01T12:00:00.000Z'));
      const [host] = await hostsOf(org);
      const res = await w.adminA.put<NetworkHost>(`/network-host/${host.id}/status/UNKNOWN`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ ...host, status: 'UNKNOWN' });
      expect((await hostsOf(org, { status: 'UNKNOWN' })).map((h) => h.id)).to.deep.equal([host.id]);
      expectErrorBody(await w.adminA.put(`/network-host/${host.id}/status/TRUSTED`), 400);
      expectErrorBody(await w.adminA.put(`/network-host/${uid('host')}/status/KNOWN`), 404);
      expectErrorBody(await w.adminB.put(`/network-host/${host.id}/status/KNOWN`), 403);
      expectErrorBody(await w.readerA.put(`/network-host/${host.id}/status/KNOWN`), 403);
      expectErrorBody(await w.adminB.get(`/network-host/${host.id}`), 403);
      expectErrorBody(await w.t.anon.put(`/network-host/${host.id}/status/KNOWN`), 401);
      expect((await w.readerA.get<NetworkHost>(`/network-host/${host.id}`)).body.status).to.equal('UNKNOWN');
    });
  });

  describe('discovered hosts (bulk ingest)', () => {
    it('upserts by org and MAC, or IP when no MAC: counts created, updated and unchanged', async () => {
      const org = await w.t.world.org(w.orgA);
      const first = await w.adminA.post('/network-host/discovered', [
        { orgId: org, ipAddress: '10.1.0.1', macAddress: 'AA-BB-CC-00-00-01', macVendor: 'Acme', lastSeen: '2024-07-01T00:00:00Z' },
        { orgId: org, ipAddress: '10.1.0.2', macAddress: 'aa:bb:cc:00:00:02', lastSeen: '2024-07-01T00:00:00Z' },
        { orgId: org, ipAddress: '10.1.0.3', lastSeen: '2024-07-01T00:00:00Z' },
        { orgId: org, ipAddress: '10.1.0.4', macAddress: '', lastSeen: '2024-07-01T00:00:00Z' },
      ]);
      expect(first.status, first.text).to.equal(200);
      expect(first.body).to.deep.equal({ received: 4, created: 4, updated: 0, unchanged: 0 });
      const hosts = await hostsOf(org, {}, w.adminA);
      expect(hosts).to.have.length(4);
      expect(hosts.every((h) => h.status === 'NONE')).to.equal(true);
      const byIp = new Map(hosts.map((h) => [h.ipAddress, h]));
      expect(byIp.get('10.1.0.1')).to.include({ macAddress: 'aa:bb:cc:00:00:01', macVendor: 'Acme' });

      await w.adminA.put(`/network-host/${byIp.get('10.1.0.2')?.id}/status/KNOWN`);
      const second = await w.adminA.post('/network-host/discovered', [
        // Same MAC, new IP, later: the host moves, keeps KNOWN.
        { orgId: org, ipAddress: '10.1.0.22', macAddress: 'AA:BB:CC:00:00:02', lastSeen: '2024-07-02T00:00:00Z' },
        // Older sighting: nothing changes.
        { orgId: org, ipAddress: '10.1.0.99', macAddress: 'aa:bb:cc:00:00:01', lastSeen: '2024-06-01T00:00:00Z' },
        // Same IP without MAC, later.
        { orgId: org, ipAddress: '10.1.0.3', lastSeen: '2024-07-03T00:00:00Z' },
        // A host seen by MAC for the first time while its IP was known without MAC: a new host.
        { orgId: org, ipAddress: '10.1.0.4', macAddress: 'aa:bb:cc:00:00:04', lastSeen: '2024-07-03T00:00:00Z' },
      ]);
      expect(second.body).to.deep.equal({ received: 4, created: 1, updated: 2, unchanged: 1 });
      const after = await hostsOf(org, {}, w.adminA);
      expect(after).to.have.length(5);
      const moved = after.find((h) => h.macAddress === 'aa:bb:cc:00:00:02');
      expect(moved).to.include({ ipAddress: '10.1.0.22', status: 'KNOWN', lastSeen: '2024-07-02T00:00:00.000Z' });
      expect(after.find((h) => h.macAddress === 'aa:bb:cc:00:00:01')).to.include({ ipAddress: '10.1.0.1', lastSeen: '2024-07-01T00:00:00.000Z' });
      // Re-sending the same report changes nothing (idempotent).
      expect((await w.adminA.post('/network-host/discovered', [
        { orgId: org, ipAddress: '10.1.0.3', lastSeen: '2024-07-03T00:00:00Z' },
      ])).body).to.deep.equal({ received: 1, created: 0, updated: 0, unchanged: 1 });
    });

    it('duplicates within one report fold into one host at the latest sighting', async () => {
      const org = await w.t.world.org(w.orgA);
      const res = await w.adminA.post('/network-host/discovered', [
        { orgId: org, ipAddress: '10.2.0.1', macAddress: 'aa:bb:cc:00:01:01', lastSeen: '2024-07-02T00:00:00Z' },
        { orgId: org, ipAddress: '10.2.0.9', macAddress: 'aa:bb:cc:00:01:01', macVendor: 'Acme', lastSeen: '2024-07-01T00:00:00Z' },
      ]);
      expect(res.body).to.deep.equal({ received: 2, created: 1, updated: 0, unchanged: 0 });
      const [h] = await hostsOf(org);
      expect(h).to.include({ ipAddress: '10.2.0.1', macVendor: 'Acme', lastSeen: '2024-07-02T00:00:00.000Z' });
    });

    it('413 beyond 1000 hosts; 400 for a bad item; 403 when any item is outside the subtree', async () => {
      const org = await w.t.world.org(w.orgA);
      const many = Array.from({ length: 1001 }, (_, i) => ({
        orgId: org,
        ipAddress: `10.3.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        lastSeen: '2024-07-01T00:00:00Z',
      }));
      expectErrorBody(await w.adminA.post('/network-host/discovered', many), 413);
      expect((await w.adminA.post('/network-host/discovered', many.slice(0, 1000))).body).to.include({ created: 1000 });
      const item = { orgId: org, ipAddress: '10.4.0.1', lastSeen: '2024-07-01T00:00:00Z' };
      expectErrorBody(await w.adminA.post('/network-host/discovered', [{ ...item, macAddress: 'zz' }]), 400);
      expectErrorBody(await w.adminA.post('/network-host/discovered', [{ ...item, ipAddress: '10.4.0.256' }]), 400);
      expectErrorBody(await w.adminA.post('/network-host/discovered', [{ ...item, ipAddress: '10.4.0.01' }]), 400);
      expectErrorBody(await w.adminA.post('/network-host/discovered', [{ ...item, lastSeen: undefined }]), 400);
      expectErrorBody(await w.adminA.post('/network-host/discovered', { hosts: [item] }), 400);
      expectErrorBody(await w.adminA.post('/network-host/discovered', [item, { ...item, orgId: w.orgB }]), 403);
      expectErrorBody(await w.readerA.post('/network-host/discovered', [item]), 403);
      expect(await hostsOf(org, { ipAddress: '10.4.0.1' })).to.have.length(0);
    });
  });

  describe('search-page', () => {
    let org: string;
    before(async () => {
      org = await w.t.world.org(w.orgA);
      const res = await w.adminA.post('/network-host/discovered', [
        { orgId: org, ipAddress: '172.16.0.1', macAddress: '02:00:00:00:00:01', lastSeen: '2024-08-01T00:00:00Z' },
        { orgId: org, ipAddress: '172.16.0.2', macAddress: '02:00:00:00:00:02', lastSeen: '2024-08-03T00:00:00Z' },
        { orgId: org, ipAddress: '172.16.1.3', macAddress: '02:00:00:00:00:03', lastSeen: '2024-08-02T00:00:00Z' },
        { orgId: org, ipAddress: '172.16.1.4', lastSeen: '2024-08-04T00:00:00Z' },
      ]);
      expect(res.status, res.text).to.equal(200);
      const hosts = await hostsOf(org);
      await w.adminA.put(`/network-host/${hosts.find((h) => h.ipAddress === '172.16.0.2')?.id}/status/KNOWN`);
      await w.adminA.put(`/network-host/${hosts.find((h) => h.ipAddress === '172.16.1.3')?.id}/status/KNOWN`);
    });

    it('defaults to lastSeen newest first and filters by every criteria field', async () => {
      expect((await hostsOf(org)).map((h) => h.ipAddress)).to.deep.equal(['172.16.1.4', '172.16.0.2', '172.16.1.3', '172.16.0.1']);
      expect((await hostsOf(org, { ipAddress: '172.16.0.2' })).map((h) => h.ipAddress)).to.deep.equal(['172.16.0.2']);
      expect((await hostsOf(org, { ipAddress: '172.16.1.0/24' })).map((h) => h.ipAddress)).to.deep.equal(['172.16.1.4', '172.16.1.3']);
      expect((await hostsOf(org, { macAddress: '02-00-00-00-00-03' })).map((h) => h.ipAddress)).to.deep.equal(['172.16.1.3']);
      expect((await hostsOf(org, { status: 'KNOWN' })).map((h) => h.ipAddress)).to.deep.equal(['172.16.0.2', '172.16.1.3']);
      expect((await hostsOf(org, { status: 'KNOWN', ipAddress: '172.16.0.0/24' })).map((h) => h.ipAddress)).to.deep.equal(['172.16.0.2']);
      expect(await hostsOf(org, { status: 'UNKNOWN' })).to.deep.equal([]);
    });

    it('pages with the foundation PageRequest and sorts by an allowed field', async () => {
      const res = await w.readerA.post<Page<NetworkHost>>('/network-host/search-page', {
        criteria: { orgId: org },
        pageRequest: { page: 1, size: 3, sort: [{ field: 'ipAddress', direction: 'ASC' }] },
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.totalCount).to.equal(4);
      expect(res.body.totalPages).to.equal(2);
      expect(res.body.pageRequest).to.deep.include({ page: 1, size: 3 });
      expect(res.body.items.map((h) => h.ipAddress)).to.deep.equal(['172.16.1.4']);
      expectErrorBody(
        await w.readerA.post('/network-host/search-page', { criteria: { orgId: org }, pageRequest: { sort: [{ field: 'secret' }] } }),
        400,
      );
    });

    it('without orgId the caller sees its subtree only; 400 for bad criteria; 403 outside; 401', async () => {
      const res = await w.readerA.post<Page<NetworkHost>>('/network-host/search-page', {
        criteria: { ipAddress: '172.16.0.0/16' },
        pageRequest: { size: 1000 },
      });
      expect(res.body.items.map((h) => h.orgId)).to.include(org);
      const outside = await w.adminB.post<Page<NetworkHost>>('/network-host/search-page', { criteria: { ipAddress: '172.16.0.0/16' } });
      expect(outside.status).to.equal(200);
      expect(outside.body.items.map((h) => h.orgId)).to.not.include(org);
      expectErrorBody(await w.adminB.post('/network-host/search-page', { criteria: { orgId: org } }), 403);
      expectErrorBody(await w.readerA.post('/network-host/search-page', { criteria: { status: 'TRUSTED' } }), 400);
      expectErrorBody(await w.readerA.post('/network-host/search-page', { criteria: { ipAddress: 'x' } }), 400);
      expectErrorBody(await w.readerA.post('/network-host/search-page', { criteria: { ipAddress: '010.0.0.0/8' } }), 400);
      expectErrorBody(await w.readerA.post('/network-host/search-page', { criteria: { ipAddress: '10.0.0.0/33' } }), 400);
      expectErrorBody(await w.readerA.post('/network-host/search-page', { criteria: { macAddress: 'x' } }), 400);
      expectErrorBody(await w.readerA.post('/network-host/search-page'), 400);
      expectErrorBody(await w.t.anon.post('/network-host/search-page', { criteria: {} }), 401);
    });
  });
});
