/**
 * The audit trail, through HTTP against the real store: events for writes
 * by system and admin tokens, 401/403 refusals, who may search what, no way to change an
 * event, agent telemetry counted and not audited, the access log naming the caller, tokens'
 * coarse last use and who revoked them, and audit retention. Its own index prefix: the last
 * test rolls the audit alias over and deletes generations.
 */
import crypto from 'node:crypto';
import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { loadTemplates } from '../../src/store/indices.js';
import { Client } from '@elastic/elasticsearch';

interface AuditEvent {
  id: string;
  timestamp: string;
  kind: 'WRITE' | 'REFUSAL';
  requestId: string;
  operation: string;
  method: string;
  path: string;
  status: number;
  actor: { tokenId?: string; name?: string; role?: string; orgId?: string; address?: string };
  target: { type?: string; id?: string; orgId?: string };
}

interface Page {
  totalCount: number;
  items: AuditEvent[];
}

interface TokenRecord {
  id: string;
  revoked: boolean;
  lastUsedAt?: string;
  revokedAt?: string;
  revokedBy?: { username: string; authenticator: string };
}

const DAY = 86_400_000;

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('audit trail', function () {
  this.timeout(60_000);
  let t: TestApp;
  let orgA: string;
  let childA: string;
  let orgB: string;
  let adminA: Api;
  let adminAId: string;
  let readerA: Api;
  let readerAId: string;
  let adminB: Api;

  /** Mints a token through the API; its client and id. */
  async function mint(
    role: 'admin' | 'reader' | 'agent' | 'system',
    orgId?: string,
    endpointId?: string,
  ): Promise<{ api: Api; id: string }> {
    const res = await t.admin.post<{ id: string; token: string }>('/admin/tokens', {
      name: uid(role),
      role,
      ...(orgId ? { orgId } : {}),
      ...(endpointId ? { endpointId } : {}),
    });
    expect(res.status, res.text).to.equal(201);
    return { api: t.world.as(res.body.token), id: res.body.id };
  }

  /** A request id of our own, so the test finds the event of exactly this request. */
  const rid = (): string => `audit-test-${crypto.randomBytes(6).toString('hex')}`;
  const withId = (requestId: string): { headers: Record<string, string> } => ({
    headers: { 'x-request-id': requestId },
  });

  async function search(
    api: Api,
    criteria: Record<string, unknown>,
    size = 100,
  ): Promise<{ status: number; body: Page; text: string }> {
    return api.post<Page>('/audit/search-page', { criteria, pageRequest: { page: 0, size } });
  }

  /** The events of one request, as the system token sees them, once they are searchable. */
  async function eventsOf(requestId: string, n = 1): Promise<AuditEvent[]> {
    const w = await waitFor(
      () => search(t.admin, { requestId }),
      (r) => r.status === 200 && r.body.totalCount >= n,
      10_000,
      50,
    );
    expect(w.value.status, w.value.text).to.equal(200);
    expect(w.value.body.totalCount, `events of request ${requestId}`).to.equal(n);
    return w.value.body.items;
  }

  before(async function () {
    this.timeout(180_000);
    t = await startTestApp({ ECS_INDEX_PREFIX: `${RUN_PREFIX}-zaud`, ECS_AUDIT_RETENTION_DAYS: '30' });
    orgA = await t.world.org();
    childA = await t.world.org(orgA);
    orgB = await t.world.org();
    const a = await mint('admin', orgA);
    adminA = a.api;
    adminAId = a.id;
    const r = await mint('reader', orgA);
    readerA = r.api;
    readerAId = r.id;
    adminB = (await mint('admin', orgB)).api;
  });
  after(() => t?.close());

  it('a write with the system token is audited: time, actor, operation, method and path, target, its organization, status, request id', async () => {
    const requestId = rid();
    const before = Date.now();
    const res = await t.admin.post<{ id: string }>(
      '/endpoint',
      { orgId: orgA, displayName: uid('agent') },
      withId(requestId),
    );
    expect(res.status, res.text).to.equal(200);
    const [e] = await eventsOf(requestId);
    expect(e).to.deep.include({
      kind: 'WRITE',
      requestId,
      operation: 'createEndpoint',
      method: 'POST',
      path: `${P}/endpoint`,
      status: 200,
      actor: { tokenId: 'env:ECS_ADMIN_TOKEN', name: 'bootstrap-admin', role: 'system', address: '127.0.0.1' },
      target: { type: 'endpoint', id: res.body.id, orgId: orgA },
    });
    expect(Date.parse(e.timestamp)).to.be.within(before - 1000, Date.now() + 1000);
  });

  it('"who disabled this module on Tuesday": an admin\'s module change is found by target, operation and time range', async () => {
    const ep = await t.world.endpoint(childA);
    const path = `/endpoint/${ep.id}/enabled-modules`;
    expect((await adminA.post(path, { fim: 'ACTIVE' })).status).to.equal(200);
    const requestId = rid();
    const from = new Date(Date.now() - 1000).toISOString();
    const res = await adminA.put(path, { fim: 'INACTIVE' }, withId(requestId));
    expect(res.status, res.text).to.equal(200);
    await eventsOf(requestId);
    const found = await search(adminA, {
      targetType: 'endpoint',
      targetId: ep.id,
      operation: 'replaceEndpointEnabledModules',
      from,
      to: new Date(Date.now() + 1000).toISOString(),
    });
    expect(found.status, found.text).to.equal(200);
    expect(found.body.totalCount).to.equal(1);
    expect(found.body.items[0]).to.deep.include({
      kind: 'WRITE',
      requestId,
      method: 'PUT',
      path: `${P}${path}`,
      status: 200,
      actor: { tokenId: adminAId, name: found.body.items[0].actor.name, role: 'admin', orgId: orgA, address: '127.0.0.1' },
      target: { type: 'endpoint', id: ep.id, orgId: childA },
    });
    // By actor too: both of this admin's module writes, newest first.
    const mine = await search(adminA, { actorTokenId: adminAId, targetId: ep.id });
    expect(mine.body.items.map((i) => i.operation)).to.deep.equal([
      'replaceEndpointEnabledModules',
      'createEndpointEnabledModules',
    ]);
  });

  it('a failed write is audited with its status', async () => {
    const requestId = rid();
    const res = await adminA.put(`/endpoint/${uid('missing')}/enabled-modules`, { fim: 'ACTIVE' }, withId(requestId));
    expect(res.status).to.equal(404);
    const [e] = await eventsOf(requestId);
    expect(e).to.deep.include({ kind: 'WRITE', status: 404, operation: 'replaceEndpointEnabledModules' });
    expect(e.actor.tokenId).to.equal(adminAId);
  });

  it('401 refusals are audited (a body is not read before authentication: only the path names the target)', async () => {
    const bogus = t.world.as(`ecs_${crypto.randomBytes(32).toString('base64url')}`);
    const requestId = rid();
    const license = uid('lic');
    expect((await bogus.put(`/license/${license}`, { type: 'ATC', orgId: orgA }, withId(requestId))).status).to.equal(
      401,
    );
    const [e] = await eventsOf(requestId);
    expect(e).to.deep.include({
      kind: 'REFUSAL',
      status: 401,
      operation: 'putLicense',
      method: 'PUT',
      actor: { address: '127.0.0.1' },
      target: { type: 'license', id: license },
    });
    // A path naming an organization: the event is that organization's, so its admins see the attempt.
    const onOrg = rid();
    expect((await bogus.put(`/org-config/${orgA}/target-version`, { linux: '1.0.0' }, withId(onOrg))).status).to.equal(
      401,
    );
    expect((await eventsOf(onOrg))[0]).to.deep.include({
      kind: 'REFUSAL',
      status: 401,
      target: { type: 'org', id: orgA, orgId: orgA },
    });
    expect((await search(adminA, { requestId: onOrg })).body.totalCount).to.equal(1);
    // No token at all: refused and audited too (on a read).
    const bare = rid();
    expect((await t.anon.get('/license/x', withId(bare))).status).to.equal(401);
    expect((await eventsOf(bare))[0]).to.deep.include({ kind: 'REFUSAL', status: 401, operation: 'getLicense' });
  });

  it('403 refusals are audited: a reader writing, and an admin reaching outside its subtree', async () => {
    const ep = await t.world.endpoint(orgA);
    const byReader = rid();
    expect(
      (await readerA.put(`/endpoint/${ep.id}/enabled-modules`, { fim: 'INACTIVE' }, withId(byReader))).status,
    ).to.equal(403);
    const [r] = await eventsOf(byReader);
    expect(r).to.deep.include({ kind: 'REFUSAL', status: 403, operation: 'replaceEndpointEnabledModules' });
    expect(r.actor).to.deep.include({ tokenId: readerAId, role: 'reader', orgId: orgA });
    expect(r.target).to.deep.include({ type: 'endpoint', id: ep.id });

    const byB = rid();
    expect((await adminB.delete(`/endpoint/${ep.id}`, withId(byB))).status).to.equal(403);
    const [b] = await eventsOf(byB);
    expect(b).to.deep.include({
      kind: 'REFUSAL',
      status: 403,
      operation: 'deleteEndpoint',
      target: { type: 'endpoint', id: ep.id, orgId: orgA },
    });
    expect(b.actor).to.deep.include({ role: 'admin', orgId: orgB });
    // A's admin sees who tried to delete its endpoint; B's admin does not see A's endpoint in its trail.
    const seenByA = await search(adminA, { requestId: byB });
    expect(seenByA.body.totalCount).to.equal(1);
    const seenByB = await search(adminB, { requestId: byB });
    expect(seenByB.status).to.equal(200);
    expect(seenByB.body.totalCount).to.equal(0);
  });

  it('admins search only their subtree, readers not at all, system everything', async () => {
    // An event in A's child organization and one in B.
    const inChild = rid();
    expect(
      (await t.admin.post('/endpoint', { orgId: childA, displayName: uid('c') }, withId(inChild))).status,
    ).to.equal(200);
    const inB = rid();
    expect((await t.admin.post('/endpoint', { orgId: orgB, displayName: uid('b') }, withId(inB))).status).to.equal(200);
    await eventsOf(inChild);
    await eventsOf(inB);

    const all = await search(adminA, {}, 1000);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.totalCount).to.be.greaterThan(0);
    expect(
      all.body.items.every((e) => e.target.orgId === orgA || e.target.orgId === childA),
      JSON.stringify(all.body.items.map((e) => e.target)),
    ).to.equal(true);
    expect(all.body.items.some((e) => e.requestId === inChild)).to.equal(true);
    expect(all.body.items.some((e) => e.requestId === inB)).to.equal(false);
    // Naming the child organization (within A) works; naming B is refused.
    expect((await search(adminA, { orgId: childA, requestId: inChild })).body.totalCount).to.equal(1);
    expect((await search(adminA, { orgId: orgA, includeChildren: true, requestId: inChild })).body.totalCount).to.equal(
      1,
    );
    expect((await search(adminA, { orgId: orgA, requestId: inChild })).body.totalCount).to.equal(0);
    expect((await search(adminA, { orgId: orgB })).status).to.equal(403);
    expect((await search(adminB, { requestId: inChild })).body.totalCount).to.equal(0);
    // Readers may not search the trail at all, in their subtree or another.
    expect((await search(readerA, {})).status).to.equal(403);
    expect((await search(readerA, { orgId: orgB })).status).to.equal(403);
    // The system token sees both.
    expect((await search(t.admin, { requestId: inB })).body.totalCount).to.equal(1);
    // Criteria are validated.
    expect((await search(t.admin, { kind: 'DELETED' })).status).to.equal(400);
    expect(
      (await t.admin.post('/audit/search-page', { pageRequest: { sort: [{ field: 'actor', direction: 'ASC' }] } }))
        .status,
    ).to.equal(400);
  });

  it('audit events cannot be changed or deleted through the API (405/404), and the operation is an extension', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect(
        (await t.admin.request(method, '/audit/search-page', { body: {} })).status,
        `${method} /audit/search-page`,
      ).to.equal(405);
      expect(
        (await t.admin.request(method, `/audit/${uid('ev')}`, { body: {} })).status,
        `${method} /audit/{id}`,
      ).to.equal(404);
      expect((await t.admin.request(method, '/audit', { body: {} })).status, `${method} /audit`).to.equal(404);
    }
    const doc = (
      await t.anon.get<{ paths: Record<string, Record<string, { 'x-extension'?: boolean }>> }>('/openapi.json')
    ).body;
    const auditPaths = Object.keys(doc.paths).filter((p) => p.startsWith(`${P}/audit`));
    expect(auditPaths).to.deep.equal([`${P}/audit/search-page`]);
    expect(Object.keys(doc.paths[`${P}/audit/search-page`])).to.deep.equal(['post']);
    expect(doc.paths[`${P}/audit/search-page`].post['x-extension']).to.equal(true);
    expect(doc.paths[`${P}/admin/tokens/{id}`].get['x-extension']).to.equal(true);
  });

  it('agent telemetry is counted per operation and outcome, not audited', async () => {
    const ep = await t.world.endpoint(orgA);
    const agent = await mint('agent', orgA, ep.id);
    const metricsBefore = (await t.anon.get<string>('/metrics')).body;
    const connects = [rid(), rid()];
    for (const requestId of connects)
      expect((await agent.api.post(`/endpoint/${ep.id}/connect`, undefined, withId(requestId))).status).to.equal(204);
    const heartbeat = rid();
    expect(
      (
        await t.admin.post(
          '/network-heartbeat',
          { endpointId: ep.id, orgId: orgA, hostAddress: '10.9.0.1' },
          withId(heartbeat),
        )
      ).status,
    ).to.equal(201);
    // An agent's bulk report runs in the report lane and is telemetry all the same.
    const report = rid();
    expect(
      (await agent.api.post(`/endpoint/${ep.id}/software-inventory`, [{ name: 'curl', version: '8.0' }], withId(report))).status,
    ).to.equal(201);
    // A write after them, audited: once its event is searchable, theirs would be too.
    const marker = rid();
    expect((await t.admin.post('/endpoint', { orgId: orgA, displayName: uid('m') }, withId(marker))).status).to.equal(
      200,
    );
    await eventsOf(marker);
    for (const requestId of [...connects, heartbeat, report])
      expect((await search(t.admin, { requestId })).body.totalCount, requestId).to.equal(0);
    const metricsAfter = (await t.anon.get<string>('/metrics')).body;
    const delta = (name: string, labels: string): number =>
      metricValue(metricsAfter, name, labels) - metricValue(metricsBefore, name, labels);
    expect(delta('ecs_agent_telemetry_total', 'operation="connectEndpoint",status="204"')).to.equal(2);
    expect(delta('ecs_agent_telemetry_total', 'operation="recordNetworkHeartbeat",status="201"')).to.equal(1);
    expect(delta('ecs_agent_telemetry_total', 'operation="replaceEndpointSoftwareInventory",status="201"')).to.equal(1);
    // A refused telemetry call is still a refusal: audited (and counted).
    const refused = rid();
    expect((await agent.api.post(`/endpoint/${uid('other')}/connect`, undefined, withId(refused))).status).to.equal(
      403,
    );
    expect((await eventsOf(refused))[0]).to.deep.include({
      kind: 'REFUSAL',
      operation: 'connectEndpoint',
      status: 403,
    });
  });

  it('the access log line names the caller: token id and role', async () => {
    const requestId = rid();
    expect((await adminA.get(`/license/${uid('none')}`, withId(requestId))).status).to.equal(404);
    const refused = rid();
    expect((await readerA.post('/endpoint', { orgId: orgA }, withId(refused))).status).to.equal(403);
    const lines = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
    expect(lines.find((l) => l.requestId === requestId)).to.deep.include({
      tokenId: adminAId,
      role: 'admin',
      status: 404,
    });
    expect(lines.find((l) => l.requestId === refused)).to.deep.include({
      tokenId: readerAId,
      role: 'reader',
      status: 403,
    });
  });

  it('tokens record their last use, coarsely: one write per token per minute per instance, off the request path', async () => {
    const tok = await mint('reader', orgA);
    expect((await t.admin.get<TokenRecord>(`/admin/tokens/${tok.id}`)).body.lastUsedAt).to.equal(undefined);
    const metricsBefore = (await t.anon.get<string>('/metrics')).body;
    const firstUse = Date.now();
    for (let i = 0; i < 5; i++) expect((await tok.api.get(`/license/${uid('none')}`)).status).to.equal(404);
    const w = await waitFor(
      () => t.admin.get<TokenRecord>(`/admin/tokens/${tok.id}`),
      (r) => r.body.lastUsedAt !== undefined,
      10_000,
      50,
    );
    const lastUsedAt = Date.parse(String(w.value.body.lastUsedAt));
    expect(lastUsedAt).to.be.within(firstUse - 1000, firstUse + 5000);
    const metricsAfter = (await t.anon.get<string>('/metrics')).body;
    // Five uses (and the admin's reads of the token record, made with the bootstrap token, which has no record): one write.
    expect(
      metricValue(metricsAfter, 'ecs_token_last_use_writes_total') -
        metricValue(metricsBefore, 'ecs_token_last_use_writes_total'),
    ).to.equal(1);
    expect((await tok.api.get(`/license/${uid('none')}`)).status).to.equal(404);
    expect(Date.parse(String((await t.admin.get<TokenRecord>(`/admin/tokens/${tok.id}`)).body.lastUsedAt))).to.equal(
      lastUsedAt,
    );
  });

  it('a revoked token keeps who revoked it and when (the first revocation), and the revocation is audited', async () => {
    const tok = await mint('admin', orgA);
    const before = Date.now();
    const requestId = rid();
    expect((await t.admin.delete(`/admin/tokens/${tok.id}`, withId(requestId))).status).to.equal(204);
    const rec = (await t.admin.get<TokenRecord>(`/admin/tokens/${tok.id}`)).body;
    expect(rec.revoked).to.equal(true);
    expect(Date.parse(String(rec.revokedAt))).to.be.within(before - 1000, Date.now() + 1000);
    expect(rec.revokedBy).to.deep.equal({ username: 'bootstrap-admin', authenticator: 'token:env:ECS_ADMIN_TOKEN' });
    // Revoking again answers 204 and keeps the first who/when.
    expect((await t.admin.delete(`/admin/tokens/${tok.id}`)).status).to.equal(204);
    expect((await t.admin.get<TokenRecord>(`/admin/tokens/${tok.id}`)).body.revokedAt).to.equal(rec.revokedAt);
    const [e] = await eventsOf(requestId);
    expect(e).to.deep.include({
      kind: 'WRITE',
      operation: 'revokeToken',
      status: 204,
      target: { type: 'token', id: tok.id },
    });
    // The revoked token is refused, and that refusal names it nowhere but the path: it is unknown now.
    expect((await t.admin.get(`/admin/tokens/${uid('none')}`)).status).to.equal(404);
    expect((await adminA.get(`/admin/tokens/${tok.id}`)).status).to.equal(403);
  });

  it('audit events age out like heartbeats: whole generations older than ECS_AUDIT_RETENTION_DAYS, never the write generation', async () => {
    const requestId = rid();
    expect(
      (await t.admin.post('/endpoint', { orgId: orgA, displayName: uid('r') }, withId(requestId))).status,
    ).to.equal(200);
    await eventsOf(requestId);
    const retention = t.server.handle.services.auditRetention;
    // Now: the generation holding today's events is rolled over and kept (30 days).
    const now = await retention.run(new Date(), true);
    expect(now).to.include({ acted: true, rolledOver: true });
    expect(now.deleted).to.deep.equal([]);
    expect((await search(t.admin, { requestId })).body.totalCount).to.equal(1);
    // 31 days on, it is deleted whole; the write generation stays and takes new events.
    const later = await retention.run(new Date(Date.now() + 31 * DAY));
    expect(later.acted).to.equal(true);
    expect(later.deleted).to.have.length(1);
    expect(later.deleted[0]).to.match(/-audit-000001$/);
    expect((await search(t.admin, { requestId })).body.totalCount).to.equal(0);
    const next = rid();
    expect((await t.admin.post('/endpoint', { orgId: orgA, displayName: uid('n') }, withId(next))).status).to.equal(
      200,
    );
    await eventsOf(next);
  });
});

describe('tokens index of an older release', function () {
  this.timeout(120_000);
  const prefix = `${RUN_PREFIX}-ztokv1`;
  let t: TestApp | undefined;
  after(() => t?.close());

  it('gets the new token fields in place at start (no reindex), so revocation and last use work at once', async () => {
    // The tokens index as release 1 created it: mapping version 1, without the last-use and revocation fields.
    const es = await testElasticsearch();
    const client = new Client({ node: es.url });
    const current = loadTemplates().find((x) => x.name === 'tokens');
    const currentVersion = current?.version ?? 0;
    try {
      const {
        lastUsedAt: _l,
        revokedAt: _a,
        revokedBy: _b,
        revokedReason: _r,
        writeIds: _w,
        ...v1
      } = current?.template.mappings.properties ?? {};
      await client.indices.create({
        index: `${prefix}-tokens-000001`,
        settings: { number_of_replicas: 0 },
        mappings: { dynamic: 'strict', properties: v1, _meta: { version: 1 } },
        aliases: { [`${prefix}-tokens`]: { is_write_index: true } },
      });
    } finally {
      await client.close();
    }
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix });
    const mapping = await t.server.store.client.indices.getMapping({ index: `${prefix}-tokens` });
    const m = Object.values(mapping)[0].mappings;
    expect(m._meta).to.deep.include({ version: currentVersion });
    expect(m.properties).to.include.keys('lastUsedAt', 'revokedAt', 'revokedBy', 'revokedReason', 'writeIds');
    const warnings = t.logs
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level === 40 && /older than its template/.test(l.msg));
    expect(warnings).to.deep.equal([]);
    const org = await t.world.org();
    const minted = await t.admin.post<{ id: string; token: string }>('/admin/tokens', {
      name: uid('old'),
      role: 'reader',
      orgId: org,
    });
    expect((await t.world.as(minted.body.token).get(`/license/${uid('none')}`)).status).to.equal(404);
    expect((await t.admin.delete(`/admin/tokens/${minted.body.id}`)).status).to.equal(204);
    const rec = await t.admin.get<TokenRecord>(`/admin/tokens/${minted.body.id}`);
    expect(rec.body).to.include({ revoked: true });
    expect(rec.body.revokedAt).to.be.a('string');
  });
});
