/**
 * Trusted proxies (ECS_TRUSTED_PROXIES): a request from a trusted reverse proxy is judged by the
 * client its X-Forwarded-For names (the rightmost hop that is not itself a trusted proxy) —
 * for the failed-authentication budget, the audit trail and the access log — while anyone
 * else's X-Forwarded-For is ignored. The test client connects from 127.0.0.1: one app trusts
 * 127.0.0.0/8 (it plays the proxy), another trusts only 10.0.0.0/8 (it is "anyone else").
 */
import crypto from 'node:crypto';
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { loadConfig } from '../../src/config.js';

/** Two failed lookups per address and minute, and no negative cache (every unknown token costs one). */
const BUDGET = { ECS_AUTH_FAILURES_PER_MINUTE: '2', ECS_TOKEN_NEGATIVE_CACHE_SECONDS: '0' };

/** A request with an unknown token, as if forwarded for `xff` (no header when undefined). */
async function unknownToken(
  t: TestApp,
  xff?: string,
): Promise<{ status: number; requestId: string; body: unknown; headers: Headers }> {
  const requestId = uid('rq');
  const res = await t.anon.request('GET', `/endpoint/${uid('ep')}`, {
    headers: {
      'x-auth-token': `unknown-${crypto.randomBytes(12).toString('hex')}`,
      'x-request-id': requestId,
      ...(xff ? { 'x-forwarded-for': xff } : {}),
    },
  });
  return { status: res.status, requestId, body: res.body, headers: res.headers };
}

/** The audited address of a refused request, once its event is searchable. */
async function auditedAddress(t: TestApp, requestId: string): Promise<string | undefined> {
  const w = await waitFor(
    () =>
      t.admin.post<{ totalCount: number; items: { actor: { address?: string } }[] }>('/audit/search-page', {
        criteria: { requestId },
        pageRequest: { page: 0, size: 1 },
      }),
    (r) => r.status === 200 && r.body.totalCount === 1,
    10_000,
    50,
  );
  expect(w.met, `audit event of ${requestId}`).to.equal(true);
  return w.value.body.items[0].actor.address;
}

/** The client address of a request's access-log line. */
function loggedAddress(t: TestApp, requestId: string): string | undefined {
  const line = t.logs
    .map((l) => JSON.parse(l) as { requestId?: string; msg?: string; clientAddress?: string })
    .find((l) => l.requestId === requestId && l.msg === 'request');
  return line?.clientAddress;
}

describe('trusted proxies', () => {
  it('accepts addresses and CIDR ranges, and refuses anything else at start', () => {
    expect(loadConfig({}).trustedProxies).to.deep.equal([]);
    expect(loadConfig({ ECS_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.7,fd00::/8' }).trustedProxies).to.deep.equal([
      '10.0.0.0/8',
      '192.168.1.7',
      'fd00::/8',
    ]);
    expect(() => loadConfig({ ECS_TRUSTED_PROXIES: 'proxy.internal' })).to.throw(/ECS_TRUSTED_PROXIES/);
    expect(() => loadConfig({ ECS_TRUSTED_PROXIES: '10.0.0.0/33' })).to.throw(/ECS_TRUSTED_PROXIES/);
  });

  describe('behind a trusted proxy', () => {
    let t: TestApp;
    before(async function () {
      this.timeout(300_000);
      t = await startTestApp({ ...BUDGET, ECS_TRUSTED_PROXIES: '127.0.0.0/8' });
    });
    after(() => t?.close());

    it("spends the forwarded client's budget, not the proxy's; the audit and the access log name that client", async () => {
      const first = await unknownToken(t, '203.0.113.10');
      expectErrorBody({ status: first.status, body: first.body }, 401);
      expect((await unknownToken(t, '203.0.113.10')).status).to.equal(401);
      // The client's budget is spent…
      const third = await unknownToken(t, '203.0.113.10');
      expectErrorBody({ status: third.status, body: third.body }, 429);
      expect(third.headers.get('retry-after')).to.match(/^\d+$/);
      // …another client behind the same proxy keeps its own.
      expect((await unknownToken(t, '203.0.113.11')).status).to.equal(401);
      expect(await auditedAddress(t, first.requestId)).to.equal('203.0.113.10');
      expect(loggedAddress(t, first.requestId)).to.equal('203.0.113.10');
    });

    it('takes the rightmost hop that is not a trusted proxy: addresses the client wrote to the left are ignored', async () => {
      // 203.0.113.20 is the client the proxy saw; the left entries are the client's own claims.
      const spoofs = [
        '198.51.100.1, 203.0.113.20',
        '198.51.100.2, 203.0.113.20',
        '198.51.100.3,203.0.113.20, 127.0.0.1',
      ];
      const answers = [];
      for (const xff of spoofs) answers.push(await unknownToken(t, xff));
      expect(answers.map((a) => a.status)).to.deep.equal([401, 401, 429]);
      expect(await auditedAddress(t, answers[0].requestId)).to.equal('203.0.113.20');
      expect(loggedAddress(t, answers[2].requestId)).to.equal('203.0.113.20');
    });

    it('judges a request without X-Forwarded-For by the proxy itself', async () => {
      const r = await unknownToken(t);
      expect(r.status).to.equal(401);
      expect(loggedAddress(t, r.requestId)).to.equal('127.0.0.1');
    });
  });

  describe('from anyone else', () => {
    let t: TestApp;
    before(async function () {
      this.timeout(300_000);
      t = await startTestApp({ ...BUDGET, ECS_TRUSTED_PROXIES: '10.0.0.0/8' });
    });
    after(() => t?.close());

    it("ignores a spoofed X-Forwarded-For: every attempt spends the connecting address's budget and is audited under it", async () => {
      const answers = [];
      for (const xff of ['203.0.113.30', '203.0.113.31', '203.0.113.32']) answers.push(await unknownToken(t, xff));
      expect(answers.map((a) => a.status)).to.deep.equal([401, 401, 429]);
      expect(await auditedAddress(t, answers[0].requestId)).to.equal('127.0.0.1');
      expect(loggedAddress(t, answers[1].requestId)).to.equal('127.0.0.1');
      // A token that is known still answers: only unknown tokens spend the budget.
      expect(
        (await t.admin.request('GET', `/org-config/${uid('org')}`, { headers: { 'x-forwarded-for': '203.0.113.30' } }))
          .status,
      ).to.not.equal(429);
    });
  });
});
