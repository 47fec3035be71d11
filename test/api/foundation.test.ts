import { expect } from 'chai';
import { startTestApp, expectErrorBody, type TestApp } from '../helpers/app.js';
import { P } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

describe('foundation: HTTP layer, errors, auth, observability', () => {
  let t: TestApp;
  let org: string;
  before(async () => {
    t = await startTestApp({ ECS_BODY_LIMIT: '2kb' });
    org = await t.world.org();
  });
  after(() => t.close());

  describe('section-7 error bodies', () => {
    it('unknown route → 404 with the error body and the request path', async () => {
      expectErrorBody(await t.anon.get('/no/such/thing'), 404, `${P}/no/such/thing`);
    });

    it('wrong method on a known path → 405 with an Allow header', async () => {
      const res = await t.anon.request('PATCH', '/client-version/default');
      expectErrorBody(res, 405);
      expect(res.headers.get('allow')).to.contain('GET').and.contain('PUT');
    });

    it('a known resource with an unknown remainder, and the API prefix alone → 404', async () => {
      expectErrorBody(await t.anon.get('/client-version/default/more'), 404, `${P}/client-version/default/more`);
      expectErrorBody(await t.anon.get(''), 404);
      expectErrorBody(await t.anon.get('/'), 404);
    });

    it('paths match without regard to case, on every segment', async () => {
      const res = await t.anon.get('/Client-Version/DEFAULT');
      expect(res.status).to.equal(200);
      expect((await t.anon.get('/CLIENT-VERSION/default')).status).to.equal(200);
    });

    it('an unparsable JSON body → 400', async () => {
      const res = await t.admin.request('PUT', '/client-version/default', { raw: '{"linux": "1.0.0",' });
      expectErrorBody(res, 400);
      expect((res.body as { message: string }).message).to.match(/JSON/);
    });

    it('a body over the limit → 413', async () => {
      const res = await t.admin.put('/client-version/default', { linux: '1.0.0', mac: '1.0.0', windows: '1.0.0', pad: 'x'.repeat(4000) });
      expectErrorBody(res, 413);
    });

    it('a missing required body → 400 that says so', async () => {
      const res = await t.admin.request('PUT', '/client-version/default');
      expectErrorBody(res, 400);
      expect((res.body as { message: string }).message).to.contain('body');
    });

    it('a create that collides → 409', async () => {
      const res = await t.admin.post('/admin/organizations', { id: org, name: 'again' });
      expectErrorBody(res, 409);
    });

    it('a reference to an unknown parent → 404', async () => {
      expectErrorBody(await t.admin.post('/admin/organizations', { id: 'orphan-x', name: 'o', parentId: 'nope-parent' }), 404);
    });
  });

  describe('tokens', () => {
    it('a sec operation without a token → 401; with an unknown token → 401', async () => {
      expectErrorBody(await t.anon.get(`/org-config/${org}`), 401);
      expectErrorBody(await t.world.as('ecs_not-a-real-token').get(`/org-config/${org}`), 401);
    });

    it('a revoked token → 401 at once', async () => {
      const res = await t.admin.post<{ id: string; token: string }>('/admin/tokens', { name: 'tmp', role: 'reader', orgId: org });
      expect(res.status).to.equal(201);
      expect(res.body.token).to.match(/^ecs_[A-Za-z0-9_-]{43}$/);
      const reader = t.world.as(res.body.token);
      // Warm the cache, then revoke: the revocation must win over the cache.
      expect((await reader.get('/org-config/target-versions')).status).to.equal(200);
      expect((await t.admin.delete(`/admin/tokens/${res.body.id}`)).status).to.equal(204);
      expectErrorBody(await reader.get('/org-config/target-versions'), 401);
      expectErrorBody(await t.admin.delete(`/admin/tokens/${res.body.id}-nope`), 404);
    });

    it('an expired token → 401', async () => {
      const expiresAt = new Date(Date.now() + 3000).toISOString();
      const token = await t.world.token('reader', org, undefined, expiresAt);
      expect((await t.world.as(token).get('/org-config/target-versions')).status).to.equal(200);
      const { value: res } = await until(
        'the token expires',
        async () => {
          const r = await t.world.as(token).get('/org-config/target-versions');
          return r.status === 200 ? undefined : r;
        },
        10_000,
        100,
      );
      expectErrorBody(res, 401);
      expect((res.body as { message: string }).message).to.contain('expired');
    });

    it('admin operations need the system role (403 for an org admin)', async () => {
      const admin = t.world.as(await t.world.token('admin', org));
      expectErrorBody(await admin.post('/admin/organizations', { id: 'x-by-admin', name: 'x' }), 403);
      expectErrorBody(await admin.post('/admin/tokens', { name: 'x', role: 'system' }), 403);
    });

    it('token creation validates role, org and endpoint binding', async () => {
      expectErrorBody(await t.admin.post('/admin/tokens', { name: 'x', role: 'root', orgId: org }), 400);
      expectErrorBody(await t.admin.post('/admin/tokens', { name: 'x', role: 'admin' }), 400);
      expectErrorBody(await t.admin.post('/admin/tokens', { name: 'x', role: 'agent', orgId: org }), 400);
      expectErrorBody(await t.admin.post('/admin/tokens', { name: 'x', role: 'admin', orgId: 'no-such-org' }), 404);
    });

    it('an organization is readable by the system role', async () => {
      const res = await t.admin.get<{ id: string; name: string }>(`/admin/organizations/${org}`);
      expect(res.status).to.equal(200);
      expect(res.body.id).to.equal(org);
      expectErrorBody(await t.admin.get('/admin/organizations/nope-org'), 404);
    });
  });

  describe('observability', () => {
    it('echoes x-request-id and generates one when absent', async () => {
      const given = await t.anon.get('/client-version/default', { headers: { 'x-request-id': 'abc-123' } });
      expect(given.headers.get('x-request-id')).to.equal('abc-123');
      const generated = await t.anon.get('/client-version/default');
      expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('logs one line per request with method, route, status and duration, never the token', async () => {
      const token = await t.world.token('reader', org);
      await t.world.as(token).get('/client-version/default', { headers: { 'x-request-id': 'log-probe-1' } });
      const line = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.requestId === 'log-probe-1' && l.msg === 'request');
      expect(line).to.include({ method: 'GET', route: `${P}/client-version/default`, status: 200 });
      expect(line?.durationMs).to.be.a('number');
      // The caller by its token's id and role, never its secret; an anonymous caller by its role alone.
      expect(line?.role).to.equal('reader');
      expect(line?.tokenId).to.be.a('string').and.not.equal(token);
      expect(t.logs.join('\n')).to.not.contain(token);
      await t.anon.get('/client-version/default', { headers: { 'x-request-id': 'log-probe-2' } });
      const anon = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.requestId === 'log-probe-2' && l.msg === 'request');
      expect(anon, JSON.stringify(anon)).to.include({ status: 200, role: 'anonymous' }).and.not.have.any.keys('tokenId', 'traceId');
    });

    it('health: live and ready', async () => {
      expect((await t.anon.get('/health/live')).status).to.equal(200);
      const ready = await t.anon.get<{ status: string }>('/health/ready');
      expect(ready.status).to.equal(200);
      expect(ready.body.status).to.equal('UP');
    });

    it('metrics: request count and latency histogram per route and status', async () => {
      await t.anon.get('/client-version/default');
      const res = await t.anon.get('/metrics');
      expect(res.status).to.equal(200);
      expect(res.text).to.match(/http_requests_total\{method="GET",route="\/endpoint-control-service\/v1\/client-version\/default",status="200"\} \d+/);
      expect(res.text).to.contain('http_request_duration_seconds_bucket');
      // Every request counts, the second of a label set as the first.
      const countOf = (text: string): number =>
        Number(/http_requests_total\{method="GET",route="\/endpoint-control-service\/v1\/client-version\/default",status="200"\} (\d+)/.exec(text)?.[1]);
      const before = countOf(res.text);
      await t.anon.get('/client-version/default');
      await t.anon.get('/client-version/default');
      expect(countOf((await t.anon.get('/metrics')).text)).to.equal(before + 2);
    });

    it('serves the OpenAPI document generated from the route table, and a docs page', async () => {
      const res = await t.anon.get<{ openapi: string; paths: Record<string, Record<string, { operationId: string }>> }>('/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.body.openapi).to.match(/^3\./);
      expect(res.body.paths[`${P}/client-version/default`].get.operationId).to.equal('getDefaultClientVersions');
      const count = Object.values(res.body.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
      expect(count).to.equal(t.server.handle.routes.length);
      const docs = await t.anon.get('/docs');
      expect(docs.status).to.equal(200);
      expect(docs.text).to.contain('swagger-ui');
      expect((await t.anon.get('/docs/assets/swagger-ui-bundle.js')).status).to.equal(200);
      // The documentation's paths lie below the API prefix and are matched as its operations are: any case, 405 for another method.
      expect((await t.anon.get('/OpenAPI.json')).status).to.equal(200);
      expect((await t.anon.get('/Docs')).text).to.contain('swagger-ui');
      const post = await t.anon.post('/openapi.json', {});
      expectErrorBody(post, 405);
      expect(post.headers.get('allow')).to.contain('GET');
      expectErrorBody(await t.anon.get('/docs/assets/no-such-file.js'), 404);
    });
  });

  describe('ECS_REQUIRE_TOKEN_EVERYWHERE', () => {
    it('demands a token on operations that declare no security', async () => {
      const strict = await startTestApp({ ECS_REQUIRE_TOKEN_EVERYWHERE: 'true' });
      try {
        expectErrorBody(await strict.anon.get('/client-version/default'), 401);
        expect((await strict.admin.get('/client-version/default')).status).to.equal(200);
      } finally {
        await strict.close();
      }
    });
  });
});
