/**
 * Tenant isolation, generated from the route table (OWASP API1, API2, API3, API5): every
 * route is called with the path parameters of organization A's records, substituted by
 * parameter name (test/helpers/stocked-org.ts), under tokens that must not reach them. A
 * route with a parameter the fixture does not know, or a body this file has no sample for,
 * fails the test, so a new route cannot escape it.
 */
import { expect } from 'chai';
import { uid, type TestApp, sharedApp } from '../helpers/app.js';
import type { ApiResponse } from '../helpers/http.js';
import { buildStockedOrg, fillPath, paramValue, pathParams, stockedRollout, type StockedOrg, type ParamMap } from '../helpers/stocked-org.js';
import type { RouteSpec } from '../../src/http/routes.js';
import { until } from '../helpers/wait.js';

type Body = { body?: unknown; contentType?: string };

/** Path parameters that name no organization's record (enums, catalogue entries, platforms). */
const GLOBAL_PARAMS = new Set(['connectionStatus', 'licenseState', 'status', 'type', 'platform', 'bundleId']);
const isGlobalParam = (path: string, name: string): boolean =>
  GLOBAL_PARAMS.has(name) || (name === 'id' && /^\/(bundle|admin\/bundles)\//.test(path)) || (name === 'name' && path.startsWith('/utm-endpoint/'));

/** Parameters that name an endpoint, or a record of exactly one endpoint. */
function endpointBound(path: string, name: string): boolean {
  if (['endpointId', 'endpoint-id', 'uuid'].includes(name)) return true;
  return name === 'id' && /^\/(endpoint|utm-endpoint|command-message)\//.test(path);
}

/**
 * Lookups by an attribute that is not unique across organizations (a site id, a firewall
 * network id, a sensor id): they answer the caller's own matches, here none.
 */
const ATTRIBUTE_LOOKUPS = new Set([
  'GET /utm-endpoint/site/{siteId}',
  'GET /lte-endpoint/site/{siteId}',
  'GET /utm-endpoint/vendor-network/{network}',
  'GET /network-heartbeat/endpoint/{endpointId}',
]);

const key = (r: RouteSpec): string => `${r.method} ${r.path}`;

describe('tenant isolation over every route (generated from the route table)', () => {
  let t: TestApp;
  let A: StockedOrg;
  let orgB: string;
  let B: { admin: string; reader: string };
  let bundle: Record<string, unknown>;
  let routes: RouteSpec[];

  /**
   * A request body for each route that declares one, naming A's records (valid, so that a
   * refusal is about the caller, never a 400). `empty` is the criteria-free variant of a
   * search, count or aggregation.
   */
  function bodies(): Record<string, { body: () => unknown; empty?: () => unknown; contentType?: string }> {
    const orgId = A.orgId;
    const ep = A.endpoint.id;
    const now = (): string => new Date().toISOString();
    const samples: Record<string, { body: () => unknown; empty?: () => unknown; contentType?: string }> = {
      'POST /utm-endpoint': { body: () => ({ orgId, serialId: uid('SN') }) },
      'PUT /utm-endpoint/{id}': { body: () => ({ orgId, serialId: A.utm.serialId, displayName: 'taken' }) },
      'PATCH /utm-endpoint/{id}': {
        body: () => [{ op: 'replace', path: '/displayName', value: 'taken' }],
        contentType: 'application/json-patch+json',
      },
      'POST /utm-endpoint/serial/{serial}/interface/{name}': { body: () => ({ status: 'INACTIVE' }) },
      'POST /utm-endpoint/searchPage': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /utm-endpoint/count': { body: () => ({ orgId }), empty: () => ({}) },
      'POST /utm-endpoint/model/aggregation': { body: () => ({ orgId }), empty: () => ({}) },
      'POST /utm-endpoint/connection-status/aggregation': { body: () => ({ orgId }), empty: () => ({}) },
      'POST /endpoint/connection-status/aggregation': { body: () => ({ orgId }), empty: () => ({}) },
      'POST /lte-endpoint': { body: () => ({ orgId, imei: uid('35'), site: { id: uid('site') } }) },
      'POST /lte-endpoint/update': { body: () => ({ id: A.lte.id, orgId, imei: A.lte.imei, site: A.lte.site }) },
      'POST /lte-endpoint/search': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /endpoint/page-search': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /jobs': { body: () => ({ action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId, basic: uid('no-agent') } }) },
      'POST /jobs/dry-run': { body: () => ({ action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId, basic: uid('no-agent') } }) },
      'POST /rollouts': { body: () => stockedRollout(orgId) },
      'POST /rollouts/page-search': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /endpoint': { body: () => ({ orgId, displayName: 'taken' }) },
      'PUT /endpoint/{id}': { body: () => ({ orgId, displayName: 'taken' }) },
      'PUT /client-version/default': { body: () => ({ linux: '9.9.9', mac: '9.9.9', windows: '9.9.9' }) },
      'PUT /org-config/{orgId}/target-version': { body: () => ({ linux: '9.9.9', mac: '', windows: '' }) },
      'POST /admin/organizations': { body: () => ({ id: uid('org'), name: 'taken', parentId: orgId }) },
      'PATCH /admin/organizations/{id}': { body: () => ({ name: 'taken' }) },
      'POST /admin/tokens': { body: () => ({ name: 'taken', role: 'admin', orgId }) },
      'POST /endpoint/{id}/enabled-modules': { body: () => ({ cmd: 'INACTIVE' }) },
      'PUT /endpoint/{id}/enabled-modules': { body: () => ({ cmd: 'INACTIVE' }) },
      'POST /org/{orgId}/enabled-modules': { body: () => ({ cmd: 'INACTIVE' }) },
      'PUT /org/{orgId}/enabled-modules': { body: () => ({ cmd: 'INACTIVE' }) },
      'POST /org/{orgId}/bundle/{bundleId}': { body: () => bundle },
      'PUT /admin/bundles/{id}': { body: () => bundle },
      'PUT /license/{id}': { body: () => ({ type: 'DCI', orgId }) },
      'POST /license/count': { body: () => ({ orgId }), empty: () => ({}) },
      'PUT /org-license-contract/org/{orgId}/type/{type}': {
        body: () => ({ orgId, type: 'ATC', nbrLicensesPurchased: 1, expirationDate: '2032-01-01T00:00:00Z' }),
      },
      'POST /org-license-contract': { body: () => ({ orgId, type: 'DCI', nbrLicensesPurchased: 1, expirationDate: '2032-01-01T00:00:00Z' }) },
      'POST /org-license-contract/searchPage': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /org/{id}/software-inventory-summary/search-page': { body: () => ({}) },
      'POST /endpoint/{id}/software-inventory': { body: () => [{ name: 'taken', version: '1' }] },
      'POST /endpoint/{id}/software-inventory/search-page': { body: () => ({}) },
      'POST /endpoint/{id}/software-inventory/{name}': { body: () => ({ version: '2.0.0' }) },
      'DELETE /endpoint/{id}/software-inventory/{name}': { body: () => ({ version: '1.0.0' }) },
      'PUT /endpoint/{id}/software-inventory/{name}': { body: () => ({ version: '2.0.0' }) },
      'POST /command-message/endpoint/{endpoint-id}': { body: () => ({ module: 'cmd', name: 'ping' }) },
      'PATCH /command-message/{id}/status/{status}': { body: () => ({}) },
      'POST /command/endpoint/{endpointId}': { body: () => ({ command: 'ping' }) },
      'POST /csi': { body: () => ({ endpointId: ep, mode: 'BASIC' }) },
      'POST /endpoint/{id}/dynamic-module/ioc': { body: () => ({ rulesUrl: 'https://rules.example.com/r.yar' }) },
      'POST /vendor/antivirus/installation-data': { body: () => ({ endpointId: ep, orgId, companyId: 'co', hardwareId: 'hw' }) },
      'POST /network-heartbeat': { body: () => ({ endpointId: ep, orgId, hostAddress: '10.77.0.5' }) },
      'POST /network-host/search-page': { body: () => ({ criteria: { orgId } }), empty: () => ({}) },
      'POST /network-host/discovered': { body: () => [{ orgId, ipAddress: '10.77.0.10', lastSeen: now() }] },
      'POST /report/host-info/aggregation': { body: () => ({ orgIds: [orgId], column: 'os' }), empty: () => ({ column: 'os' }) },
      'POST /config/org': { body: () => ({ orgId, fields: {} }) },
      // B's own organization has audit events (its creation, its tokens): the criteria-free variant asks for endpoint targets, of which B has none.
      'POST /audit/search-page': { body: () => ({ criteria: { orgId } }), empty: () => ({ criteria: { targetType: 'endpoint' } }) },
    };
    // A page search's /export sibling takes the page search's body.
    for (const [k, v] of Object.entries(samples)) if (/search/i.test(k)) samples[`${k}/export`] = v;
    return samples;
  }

  function bodyFor(r: RouteSpec): Body {
    if (!r.body) return {};
    const sample = bodies()[key(r)];
    if (!sample) throw new Error(`${key(r)} declares a body but test/api/tenant-isolation.test.ts has no sample for it: add one`);
    return { body: sample.body(), contentType: sample.contentType };
  }

  async function call(token: string, r: RouteSpec, params: ParamMap, body: Body = bodyFor(r)): Promise<{ res: ApiResponse; sent: string }> {
    const path = fillPath(params, r.path);
    const res = await t.world.as(token).request(r.method, path, { body: body.body, contentType: body.contentType });
    return { res, sent: decodeURIComponent(path) + JSON.stringify(body.body ?? '') };
  }

  /** A's identifiers in an answer that the request did not itself carry (the error body's `path` echoes the request). */
  function leaked(res: ApiResponse, sent: string): string[] {
    let shown: unknown = res.body;
    if (shown && typeof shown === 'object' && 'exception' in shown) shown = { ...(shown as object), path: undefined };
    const text = typeof shown === 'string' ? shown : JSON.stringify(shown ?? '');
    return A.markers.filter((m) => text.includes(m) && !sent.includes(m));
  }

  /** An answer that shows nothing: empty list, empty page, zero count. */
  function isEmpty(body: unknown): boolean {
    if (Array.isArray(body)) return body.length === 0;
    if (typeof body === 'string') return Number(body) === 0;
    const b = body as { totalCount?: number; items?: unknown[]; count?: number };
    if (b && typeof b === 'object' && 'totalCount' in b) return b.totalCount === 0 && (b.items ?? []).length === 0;
    if (b && typeof b === 'object' && 'count' in b) return b.count === 0;
    return false;
  }

  const takesTenantInput = (r: RouteSpec): boolean => r.body !== undefined || pathParams(r.path).some((p) => !isGlobalParam(r.path, p));

  before(async function () {
    this.timeout(120_000);
    t = await sharedApp();
    routes = t.server.handle.routes;
    A = await buildStockedOrg(t);
    orgB = await t.world.org();
    B = { admin: await t.world.token('admin', orgB), reader: await t.world.token('reader', orgB) };
    const b = await t.admin.get<Record<string, unknown>>(`/bundle/${String(paramValue(A.params, '/bundle/{id}', 'id'))}`);
    expect(b.status).to.equal(200);
    bundle = b.body;
  });

  it('the fixture names a record for every path parameter of every route, and every body has a sample', () => {
    const unknown: string[] = [];
    for (const r of routes) {
      for (const p of pathParams(r.path)) if (paramValue(A.params, r.path, p) === undefined) unknown.push(`{${p}} of ${key(r)}`);
      if (r.body && !bodies()[key(r)]) unknown.push(`body of ${key(r)}`);
      if (/search|count|aggregation/i.test(r.path) && r.body && !bodies()[key(r)]?.empty && !pathParams(r.path).length) {
        unknown.push(`criteria-free body of ${key(r)}`);
      }
    }
    expect(unknown, 'add them to test/helpers/stocked-org.ts or to the samples here').to.deep.equal([]);
    expect(routes.length).to.be.greaterThan(80);
  });

  it("another organization's admin gets 403 or 404 on every route naming A's records, and nothing of A in any answer", async function () {
    this.timeout(120_000);
    const problems: string[] = [];
    let checked = 0;
    for (const r of routes) {
      const { res, sent } = await call(B.admin, r, A.params);
      const leaks = leaked(res, sent);
      if (leaks.length > 0) problems.push(`${key(r)} → ${res.status} shows ${leaks.join(', ')}: ${res.text.slice(0, 200)}`);
      if (!takesTenantInput(r)) continue;
      checked++;
      const refused = res.status === 403 || res.status === 404;
      const emptyLookup = ATTRIBUTE_LOOKUPS.has(key(r)) && res.status === 200 && isEmpty(res.body);
      if (!refused && !emptyLookup) problems.push(`${key(r)} → ${res.status}: ${res.text.slice(0, 200)}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(checked).to.be.greaterThan(70);
  });

  it("searches, counts, aggregations and lists under another organization's tokens show none of A's records", async function () {
    this.timeout(60_000);
    const problems: string[] = [];
    let searches = 0;
    for (const token of [B.admin, B.reader]) {
      for (const r of routes) {
        const sample = bodies()[key(r)];
        const criteriaFree = sample?.empty && pathParams(r.path).length === 0;
        const plainList = r.method === 'GET' && pathParams(r.path).length === 0;
        if (!criteriaFree && !plainList) continue;
        const body: Body = criteriaFree ? { body: sample.empty?.() } : {};
        const { res, sent } = await call(token, r, A.params, body);
        if (res.status === 403 && !r.roles.includes('reader')) continue;
        const leaks = leaked(res, sent);
        if (leaks.length > 0) problems.push(`${key(r)} shows ${leaks.join(', ')}`);
        if (criteriaFree) {
          searches++;
          if (res.status !== 200 || !isEmpty(res.body)) problems.push(`${key(r)} with empty criteria → ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }
    const sum = await t.world.as(B.admin).get('/lte-endpoint/data-usage-sum');
    expect(Number(sum.text), 'A has an LTE using 4242.5').to.equal(0);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(searches).to.be.greaterThanOrEqual(2 * 8);
  });

  it('reader tokens get 403 on every write route, even in their own organization', async function () {
    this.timeout(60_000);
    const problems: string[] = [];
    const writes = routes.filter((r) => r.method !== 'GET' && !r.roles.includes('reader'));
    for (const r of writes) {
      const { res } = await call(A.tokens.reader, r, A.params);
      if (res.status !== 403) problems.push(`${key(r)} → ${res.status}: ${res.text.slice(0, 200)}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(writes.length).to.be.greaterThan(40);
  });

  it('agent tokens get 403 on every admin route and on every endpoint but their own', async function () {
    this.timeout(60_000);
    const problems: string[] = [];
    // The peer's records (same organization), and another organization where a route names only an organization.
    const elsewhere: ParamMap = { ...A.peerParams, orgId: orgB, id: { ...(A.peerParams.id as Record<string, string>), org: orgB } };
    let admin = 0;
    let foreign = 0;
    for (const r of routes) {
      const params = pathParams(r.path);
      if (!r.roles.includes('agent')) {
        admin++;
        const { res } = await call(A.tokens.agent, r, A.params);
        if (res.status !== 403) problems.push(`admin route ${key(r)} → ${res.status}`);
        continue;
      }
      if (!params.some((p) => endpointBound(r.path, p) || p === 'orgId' || (p === 'id' && r.path.startsWith('/org/')))) continue;
      foreign++;
      const { res } = await call(A.tokens.agent, r, elsewhere);
      if (res.status !== 403) problems.push(`${key(r)} on another endpoint → ${res.status}: ${res.text.slice(0, 200)}`);
      if (r.method === 'GET' && params.every((p) => endpointBound(r.path, p) && !r.path.startsWith('/utm-endpoint'))) {
        const own = await call(A.tokens.agent, r, A.params);
        if (own.res.status !== 200) problems.push(`${key(r)} on its own endpoint → ${own.res.status}: ${own.res.text.slice(0, 200)}`);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(admin).to.be.greaterThan(40);
    expect(foreign).to.be.greaterThan(10);
  });

  it('revoked and expired tokens get 401 on every route', async function () {
    this.timeout(60_000);
    const issued = await t.admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('revoked'), role: 'admin', orgId: A.orgId });
    expect((await t.world.as(issued.body.token).get(`/endpoint/${A.endpoint.id}`)).status).to.equal(200);
    expect((await t.admin.delete(`/admin/tokens/${issued.body.id}`)).status).to.equal(204);
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const expiring = await t.world.token('admin', A.orgId, undefined, expiresAt);
    expect((await t.world.as(expiring).get(`/endpoint/${A.endpoint.id}`)).status).to.equal(200);
    await until('the token expires', async () => (await t.world.as(expiring).get(`/endpoint/${A.endpoint.id}`)).status === 401, 10_000, 100);
    const problems: string[] = [];
    for (const [name, token] of [['revoked', issued.body.token], ['expired', expiring]] as const) {
      for (const r of routes) {
        const { res } = await call(token, r, A.params);
        if (res.status !== 401) problems.push(`${name}: ${key(r)} → ${res.status}`);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  describe('mass assignment: server-owned and identity fields in a PUT body change nothing', () => {
    it('endpoint PUT: orgId outside the caller → 403; id → 400; stale version → 409; another family → 404; createdBy/createdAt/deleted ignored', async () => {
      const adminA = t.world.as(A.tokens.admin);
      const before = (await adminA.get<Record<string, unknown>>(`/endpoint/${A.peer.id}`)).body;
      expect((await adminA.put(`/endpoint/${A.peer.id}`, { ...before, orgId: orgB })).status).to.equal(403);
      expect((await adminA.put(`/endpoint/${A.peer.id}`, { ...before, id: uid('other') })).status).to.equal(400);
      expect((await adminA.put(`/endpoint/${A.peer.id}`, { ...before, version: Number(before.version) + 5 })).status).to.equal(409);
      // A type of another family names no record of that family (docs/adr/0034-endpoints-one-polymorphic-index.md).
      expect((await adminA.put(`/endpoint/${A.peer.id}`, { ...before, type: 'VC_UTM' })).status).to.equal(404);
      const forged = {
        ...before,
        createdBy: { username: 'mallory', authenticator: 'forged' },
        updatedBy: { username: 'mallory', authenticator: 'forged' },
        createdAt: '2001-01-01T00:00:00.000Z',
        deleted: true,
        displayName: 'renamed',
      };
      const res = await adminA.put<Record<string, unknown>>(`/endpoint/${A.peer.id}`, forged);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: A.peer.id, orgId: A.orgId, createdAt: before.createdAt, deleted: false, type: before.type, displayName: 'renamed' });
      expect(res.body.createdBy).to.deep.equal(before.createdBy);
      expect((res.body.updatedBy as { username: string }).username).to.not.equal('mallory');
      expect(res.body.version).to.equal(Number(before.version) + 1);
      expect((await adminA.get(`/endpoint/${A.peer.id}`)).status).to.equal(200);
    });

    it('enabled-modules PUT: another orgId or id → 400; createdBy/createdAt ignored; stale version → 409', async () => {
      const adminA = t.world.as(A.tokens.admin);
      const path = `/endpoint/${A.endpoint.id}/enabled-modules`;
      const before = (await adminA.get<Record<string, unknown>>(path)).body;
      expect((await adminA.put(path, { ...before, orgId: orgB })).status).to.equal(400);
      expect((await adminA.put(path, { ...before, id: A.peer.id })).status).to.equal(400);
      const res = await adminA.put<Record<string, unknown>>(path, { ...before, createdBy: 'mallory', createdAt: '2001-01-01T00:00:00.000Z', fim: 'ACTIVE' });
      expect(res.status, res.text).to.equal(200);
      const after = (await adminA.get<Record<string, unknown>>(path)).body;
      expect(after).to.include({ id: before.id, orgId: A.orgId, createdBy: before.createdBy, createdAt: before.createdAt, fim: 'ACTIVE' });
      expect((await adminA.put(path, { ...before, version: Number(after.version) + 3 })).status).to.equal(409);
    });

    it('license PUT: state, orgId outside the caller and a stale version are refused; the dates stay server-owned', async () => {
      const adminA = t.world.as(A.tokens.admin);
      const before = (await adminA.get<Record<string, unknown>>(`/license/${A.licenseId}`)).body;
      expect((await adminA.put(`/license/${A.licenseId}`, { ...before, state: 'ACTIVATED' })).status).to.equal(409);
      expect((await adminA.put(`/license/${A.licenseId}`, { ...before, orgId: orgB })).status).to.equal(403);
      expect((await adminA.put(`/license/${A.licenseId}`, { ...before, version: Number(before.version) + 2 })).status).to.equal(409);
      const res = await adminA.put<Record<string, unknown>>(`/license/${A.licenseId}`, {
        ...before,
        creationDate: '2001-01-01T00:00:00.000Z',
        activationDate: '2001-01-01T00:00:00.000Z',
        revocationDate: '2001-01-01T00:00:00.000Z',
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: A.licenseId, orgId: A.orgId, state: before.state, creationDate: before.creationDate });
      expect(res.body).to.not.have.any.keys('activationDate', 'revocationDate');
    });

    it('license-contract PUT: the organization and type of the path win; createdBy/createdAt stay', async () => {
      const adminA = t.world.as(A.tokens.admin);
      const path = `/org-license-contract/org/${A.orgId}/type/ATC`;
      const before = (await adminA.get<Record<string, unknown>>(path)).body;
      expect((await adminA.put(path, { ...before, orgId: orgB })).status).to.equal(400);
      expect((await adminA.put(path, { ...before, type: 'DCI' })).status).to.equal(400);
      const res = await adminA.put<Record<string, unknown>>(path, {
        ...before,
        createdBy: 'mallory',
        createdAt: '2001-01-01T00:00:00.000Z',
        nbrLicensesPurchased: 9,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ orgId: A.orgId, type: 'ATC', createdBy: before.createdBy, createdAt: before.createdAt, nbrLicensesPurchased: 9 });
      expect((await t.world.as(B.admin).get(path)).status).to.equal(403);
    });
  });
});
