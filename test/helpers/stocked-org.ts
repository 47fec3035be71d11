/**
 * One organization holding a record of every kind a route can name (endpoints of each
 * family, modules, license, contract, command messages and deliveries, network host,
 * heartbeat, inventory, vendor data, agent config, target versions, a token), built
 * through the API, with the path-parameter values that name them. The tenant-isolation
 * test calls every route with another organization's token on these values; the fuzzer
 * mixes them into its generated path parameters so cases reach real records.
 */
import { expect } from 'chai';
import type { TestApp } from './app.js';
import { uid, type EndpointRecord } from './app.js';

/** An organization stocked with a record of every kind a route can name (not the shared app's OrgFixture of test/helpers/app.ts). */
export interface StockedOrg {
  orgId: string;
  childOrgId: string;
  /** Agent endpoint with an agent token, a command message (SENT: it has a delivery), modules, inventory, vendor data. */
  endpoint: EndpointRecord;
  /** A second agent endpoint of the same organization, with its own message and inventory. */
  peer: EndpointRecord;
  /** An agent endpoint in the child organization. */
  childEndpoint: EndpointRecord;
  utm: EndpointRecord;
  lte: EndpointRecord;
  licenseId: string;
  tokens: { admin: string; reader: string; agent: string; agentTokenId: string };
  /** Path-parameter values naming this organization's records (see `paramValue`). */
  params: ParamMap;
  /** The same with every endpoint-bound value naming `peer` instead of `endpoint`. */
  peerParams: ParamMap;
  /** Strings that identify this organization's records; none may reach another organization. */
  markers: string[];
}

/**
 * Values by path-parameter name as written in the route path (`endpoint-id`); names that
 * mean different records on different paths (`id`, `name`, `status`) map the path's first
 * segment, or its first two (`admin/tokens`), to the value.
 */
export type ParamMap = Record<string, string | Record<string, string>>;

/**
 * The value naming a fixture record for a parameter of a route path, or undefined when the
 * map does not know the parameter (for that path's first segment).
 */
export function paramValue(map: ParamMap, path: string, name: string): string | undefined {
  const v = map[name];
  if (typeof v === 'string' || v === undefined) return v;
  const [, first = '', second = ''] = path.split('/');
  return v[`${first}/${second}`] ?? v[first];
}

/** The placeholders of a route path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
}

/** A route path with every placeholder filled from the map; throws naming a parameter the map does not know. */
export function fillPath(map: ParamMap, path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = paramValue(map, path, name);
    if (v === undefined) throw new Error(`no fixture value for {${name}} in ${path}: add one to test/helpers/stocked-org.ts`);
    return encodeURIComponent(v);
  });
}

async function ok<T>(res: Promise<{ status: number; body: T; text: string }>, status = 200): Promise<T> {
  const r = await res;
  expect(r.status, r.text).to.equal(status);
  return r.body;
}

/** Builds the organization (with a child) and its records through the API with the system token. */
export async function buildStockedOrg(t: TestApp): Promise<StockedOrg> {
  const a = t.admin;
  const orgId = await t.world.org();
  const childOrgId = await t.world.org(orgId);
  const siteId = uid('site');
  const endpoint = await t.world.endpoint(orgId, { hostInfo: { os: 'windows', hostName: uid('host') }, certSubject: uid('cn') });
  const peer = await t.world.endpoint(orgId, { hostInfo: { os: 'linux', hostName: uid('host') } });
  const childEndpoint = await t.world.endpoint(childOrgId);
  const utm = await t.world.utm(orgId, {
    siteId,
    lastMacAddress: '02:00:5e:' + [1, 2, 3].map(() => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join(':'),
    commonName: uid('fw'),
    merakiNetworkId: uid('N'),
    model: uid('MX'),
    displayName: uid('utm'),
  });
  const lte = await t.world.lte(orgId, { imei: uid('35'), site: { id: siteId }, dataUsage: 4242.5, displayName: uid('lte') });
  for (const ep of [endpoint, peer]) await ok(a.post(`/endpoint/${ep.id}/connect`), 204);

  const licenseId = uid('lic');
  await ok(a.put(`/license/${licenseId}`, { type: 'ATC', orgId, ownerId: uid('owner') }));
  await ok(a.post('/org-license-contract', { orgId, type: 'ATC', expirationDate: '2031-01-31T00:00:00Z', nbrLicensesPurchased: 7 }));
  await ok(a.post(`/endpoint/${endpoint.id}/enabled-modules`, { cmd: 'ACTIVE' }));
  await ok(a.post(`/org/${orgId}/enabled-modules`, { cmd: 'ACTIVE' }));
  await ok(a.put(`/org-config/${orgId}/target-version`, { linux: '1.2.3', mac: '', windows: '' }));
  await ok(a.post('/config/org', { orgId, fields: { enableFim: true } }), 201);
  await ok(a.post('/vendor/antivirus/installation-data', { endpointId: endpoint.id, orgId, companyId: uid('co'), hardwareId: uid('hw') }), 201);
  await ok(a.post('/network-heartbeat', { endpointId: endpoint.id, orgId, hostAddress: '10.77.0.5', timestamp: new Date().toISOString() }), 201);

  const software = { name: uid('sw'), version: '1.0.0' };
  for (const ep of [endpoint, peer]) await ok(a.post(`/endpoint/${ep.id}/software-inventory`, [software]), 201);

  const messages: { id: string; uuid: string }[] = [];
  for (const ep of [endpoint, peer]) {
    const m = await ok(a.post<{ id: string; uuid: string }>(`/command-message/endpoint/${ep.id}`, { module: 'cmd', name: 'ping' }), 201);
    await ok(a.patch(`/command-message/${m.id}/status/SENT`));
    messages.push(m);
  }

  const mac = '02:42:ac:' + [1, 2, 3].map(() => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join(':');
  await ok(a.post('/network-host/discovered', [{ orgId, ipAddress: '10.77.0.9', macAddress: mac, lastSeen: new Date().toISOString() }]));
  const hosts = await ok(
    a.post<{ items: { id: string }[] }>('/network-host/search-page', { criteria: { orgId, macAddress: mac }, pageRequest: { page: 0, size: 5 } }),
  );
  expect(hosts.items).to.have.length(1);
  const hostId = hosts.items[0].id;

  const bundles = await ok(a.get<{ id: string }[]>('/bundle'));
  expect(bundles.length, 'the bundle catalogue is empty').to.be.greaterThan(0);
  const bundleId = bundles[0].id;

  // A job of the organization acting on no agent: criteria that match none.
  const job = await ok(a.post<{ id: string }>('/jobs', { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId, basic: uid('no-agent') } }), 202);
  // A rollout of the organization that upgrades no agent of it (a version for mac only), paused at once.
  const rollout = await ok(a.post<{ id: string }>('/rollouts', stockedRollout(orgId)), 201);
  await ok(a.post(`/rollouts/${rollout.id}/pause`));
  const extraToken = await ok(a.post<{ id: string }>('/admin/tokens', { name: uid('tok'), role: 'reader', orgId }), 201);
  const agentToken = await ok(a.post<{ id: string; token: string }>('/admin/tokens', { name: uid('agent'), role: 'agent', orgId, endpointId: endpoint.id }), 201);
  const tokens = {
    admin: await t.world.token('admin', orgId),
    reader: await t.world.token('reader', orgId),
    agent: agentToken.token,
    agentTokenId: agentToken.id,
  };

  const common = {
    orgId,
    serial: String(utm.serialId),
    siteId,
    network: String(utm.merakiNetworkId),
    mac: String(utm.lastMacAddress),
    commonName: String(utm.commonName),
    imei: String(lte.imei),
    connectionStatus: 'CONNECTED',
    hoh: 'hoh-1',
    version: 'v1.0.0',
    'internal-ips': '10.77.0.5,10.77.0.6',
    'external-ip': '203.0.113.77',
    bundleId,
    platform: 'windows',
    licenseState: 'ACTIVATED',
    type: 'ATC',
    'software-name': software.name,
    'software-version': software.version,
  };
  const byEndpoint = (ep: EndpointRecord, message: { id: string; uuid: string }): ParamMap => ({
    ...common,
    id: {
      endpoint: ep.id,
      'utm-endpoint': utm.id,
      license: licenseId,
      'command-message': message.id,
      'network-host': hostId,
      org: orgId,
      bundle: bundleId,
      'admin/organizations': orgId,
      'admin/tokens': extraToken.id,
      'admin/bundles': bundleId,
      jobs: job.id,
      rollouts: rollout.id,
    },
    endpointId: ep.id,
    'endpoint-id': ep.id,
    uuid: message.uuid,
    name: { 'utm-endpoint': 'WAN1', endpoint: software.name },
    status: { 'command-message': 'SENT', 'network-host': 'KNOWN' },
  });
  const params = byEndpoint(endpoint, messages[0]);
  const peerParams = byEndpoint(peer, messages[1]);

  const markers = [
    orgId,
    childOrgId,
    ...[endpoint, peer, childEndpoint, utm, lte].flatMap((e) => [e.id, String(e.displayName)]),
    String(endpoint.certSubject),
    String((endpoint.hostInfo as { hostName: string }).hostName),
    common.serial,
    common.network,
    common.mac,
    common.commonName,
    common.imei,
    String(utm.model),
    siteId,
    licenseId,
    ...messages.flatMap((m) => [m.id, m.uuid]),
    hostId,
    mac,
    software.name,
    extraToken.id,
    agentToken.id,
    job.id,
  ];
  return { orgId, childOrgId, endpoint, peer, childEndpoint, utm, lte, licenseId, tokens, params, peerParams, markers };
}

/** A rollout of the organization that sends nothing to the stocked agents (mac only, a long soak). */
export function stockedRollout(orgId: string): Record<string, unknown> {
  return {
    name: 'stocked',
    orgId,
    targetVersion: { mac: 'v9.9.9' },
    rings: [{ percent: 100 }],
    soakSeconds: 86_400,
    gate: { minHealthyPercent: 90, withinSeconds: 3600 },
    autoRollback: false,
  };
}
