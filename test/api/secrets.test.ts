/**
 * Token secrets never leave the service: not in its logs (at trace level, every line
 * captured), not in error bodies, not in /metrics, whichever way a caller sends them.
 */
import crypto from 'node:crypto';
import { expect } from 'chai';
import { ADMIN_TOKEN, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { ApiResponse } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

describe('secrets: tokens never appear in logs, error bodies or metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ LOG_LEVEL: 'trace' });
  });
  after(() => t.close());

  it('every secret used against the app, valid or not, is absent from the logs, error bodies and /metrics', async function () {
    this.timeout(60_000);
    const org = await t.world.org();
    const ep = await t.world.endpoint(org);
    const secrets: string[] = [ADMIN_TOKEN];
    const mint = async (role: 'admin' | 'reader' | 'agent', expiresAt?: string): Promise<{ id: string; token: string }> => {
      const res = await t.admin.post<{ id: string; token: string }>('/admin/tokens', {
        name: uid(role),
        role,
        orgId: org,
        ...(role === 'agent' ? { endpointId: ep.id } : {}),
        ...(expiresAt ? { expiresAt } : {}),
      });
      expect(res.status, res.text).to.equal(201);
      secrets.push(res.body.token);
      return res.body;
    };
    const admin = await mint('admin');
    const reader = await mint('reader');
    const agent = await mint('agent');
    const revoked = await mint('reader');
    const expiring = await mint('reader', new Date(Date.now() + 1000).toISOString());
    expect((await t.admin.delete(`/admin/tokens/${revoked.id}`)).status).to.equal(204);
    const unknown = `ecs_${crypto.randomBytes(32).toString('base64url')}`;
    const oversized = `ecs_${crypto.randomBytes(600).toString('hex')}`;
    const nearMiss = admin.token.slice(0, -1) + (admin.token.endsWith('A') ? 'B' : 'A');
    secrets.push(unknown, oversized, nearMiss);
    // The expiring token is used once it has expired (its refusal must not show it either).
    await until('the expiring token refused', async () => (await t.world.as(expiring.token).get(`/endpoint/${ep.id}`)).status === 401, 10_000, 50);

    const errors: ApiResponse[] = [];
    const record = (res: ApiResponse): void => {
      if (res.status >= 400) errors.push(res);
    };
    for (const token of secrets) {
      const as = t.world.as(token);
      record(await as.get(`/endpoint/${ep.id}`));
      record(await as.post('/endpoint/page-search', { criteria: { orgId: org } }));
      record(await as.post('/endpoint/page-search', { criteria: { orgId: 'not an id' } }));
      record(await as.put(`/endpoint/${ep.id}`, { orgId: org, version: 999 }));
      record(await as.post(`/endpoint/${ep.id}/connect`));
      record(await as.post('/admin/tokens', { name: 'x', role: 'system' }));
      record(await as.request('POST', '/endpoint/page-search', { raw: '{"criteria":', contentType: 'application/json' }));
      record(await as.get('/no/such/route'));
      // The same secret where a token does not belong: another header, the query string, a cookie.
      record(await t.anon.get(`/endpoint/${ep.id}`, { headers: { authorization: `Bearer ${token}`, cookie: `token=${token}` } }));
      record(await t.anon.get(`/endpoint/${ep.id}?x-auth-token=${encodeURIComponent(token)}&token=${encodeURIComponent(token)}`));
    }
    for (const token of [expiring.token, agent.token, reader.token]) record(await t.world.as(token).delete(`/endpoint/${ep.id}`));
    expect(errors.length).to.be.greaterThan(secrets.length * 5);
    expect(errors.map((e) => e.status)).to.include.members([400, 401, 403, 404, 409]);

    const metrics = await t.anon.get('/metrics');
    expect(metrics.status).to.equal(200);
    const logs = t.logs.join('\n');
    expect(t.logs.length).to.be.greaterThan(secrets.length * 10);
    const bodies = errors.map((e) => e.text).join('\n');
    for (const secret of secrets) {
      // The whole secret and its distinctive part (the random bytes after `ecs_`).
      for (const needle of [secret, secret.slice(4, 24)]) {
        expect(logs.includes(needle), `a log line shows ${needle.slice(0, 8)}…`).to.equal(false);
        expect(bodies.includes(needle), `an error body shows ${needle.slice(0, 8)}…`).to.equal(false);
        expect(metrics.text.includes(needle), `/metrics shows ${needle.slice(0, 8)}…`).to.equal(false);
      }
    }
  });
});
