/**
 * Concurrent changes never collide (docs/adr/0065): organization creates and token revocations
 * through two instances at once are all accepted, and each instance learns the other's within
 * a second through the change feed. Also: a change whose feed write fails is answered 503 after
 * its record is saved, and is still announced once the store takes the feed write.
 */
import crypto from 'node:crypto';
import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { dropIndicesUnder, testElasticsearch } from '../helpers/elasticsearch.js';
import type { ApiResponse } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

/** The bound for a change to reach every instance. */
const WITHIN_MS = 1000;
const CALLERS = 32;

/** Runs `work(i)` for i in [0, n) with `callers` at a time; the answers in order. */
async function concurrently<T>(n: number, callers: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = next++; i < n; i = next++) out[i] = await work(i);
    }),
  );
  return out;
}

interface TreeAnswer {
  organizations: { id: string; parentId?: string }[];
}

describe('concurrent changes through two instances', () => {
  // Its own index prefix: one test blocks writes to the change feed's index.
  const prefix = `ecs-cc${crypto.randomBytes(3).toString('hex')}`;
  let a: TestApp;
  let b: TestApp;
  let es: Client;

  before(async function () {
    this.timeout(180_000);
    // Long caches make the feed the only way an instance can learn of a change in time.
    const env = { ECS_INDEX_PREFIX: prefix, ECS_TOKEN_CACHE_SECONDS: '300', ECS_ORG_CACHE_SECONDS: '300' };
    a = await startTestApp(env);
    b = await startTestApp(env);
    es = new Client({ node: (await testElasticsearch()).url });
  });
  after(async function () {
    this.timeout(60_000);
    await Promise.all([a?.close(), b?.close()]);
    await es?.close();
    await dropIndicesUnder(prefix);
  });

  // How soon each instance sees the other's organizations is measured by the org-create bench
  // (ecs_change_feed_delay_max_seconds); here, that both trees end complete.
  it('32 callers creating organizations under one distributor through both instances: every answer 201, both trees complete', async function () {
    this.timeout(300_000);
    const distributor = await a.world.org();
    const admin = await a.world.token('admin', distributor);
    const viewers = { a: a.world.as(admin), b: b.world.as(admin) };
    const n = CALLERS * 16;
    const ids = Array.from({ length: n }, (_, i) => `${distributor}-c${i}`);
    const answers = await concurrently(n, CALLERS, (i) =>
      (i % 2 === 0 ? a : b).admin.post('/admin/organizations', { id: ids[i], name: `Customer ${i}`, parentId: distributor }),
    );
    const refused = answers.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`);
    expect(refused, 'creates not answered 201').to.deep.equal([]);

    // Both trees hold every organization below the distributor.
    for (const [name, api] of Object.entries(viewers)) {
      const tree = await waitFor(
        () => api.get<TreeAnswer>('/org/tree'),
        (r) => r.status === 200 && r.body.organizations.length === n + 1,
        10_000,
      );
      expect(tree.met, `${name} knows ${tree.value.body.organizations?.length} of ${n + 1}`).to.equal(true);
      const children = tree.value.body.organizations.filter((o) => o.parentId === distributor).map((o) => o.id);
      expect(children.sort(), name).to.deep.equal([...ids].sort());
    }
    // A repeated create of an existing id is still that caller's own conflict.
    expectErrorBody(await b.admin.post('/admin/organizations', { id: ids[0], name: 'again', parentId: distributor }), 409);
  });

  it('500 tokens revoked concurrently through both instances: every answer 204, each refused by both instances within a second', async function () {
    this.timeout(300_000);
    const org = await a.world.org();
    const leaf = await a.world.org(org);
    const n = 500;
    const minted = await concurrently(n, CALLERS, async (i) => {
      const res = await (i % 2 === 0 ? a : b).admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('tok'), role: 'reader', orgId: leaf });
      expect(res.status, res.text).to.equal(201);
      return res.body;
    });
    const use = (app: TestApp, i: number): Promise<ApiResponse> => app.world.as(minted[i]?.token).get('/org/tree');
    // Both instances verify every token and cache it (for 300 s).
    await concurrently(n, CALLERS, async (i) => {
      for (const app of [a, b]) expect((await use(app, i)).status).to.equal(200);
    });

    const revokedAt = new Array<number>(n);
    const revocations = await concurrently(n, CALLERS, async (i) => {
      const res = await (i % 2 === 0 ? a : b).admin.delete(`/admin/tokens/${minted[i]?.id}`);
      revokedAt[i] = performance.now();
      return res;
    });
    expect(revocations.filter((r) => r.status !== 204).map((r) => `${r.status} ${r.text}`), 'revocations not answered 204').to.deep.equal([]);

    // Every token is refused by both; an acceptance later than WITHIN_MS after its revocation breaks the bound.
    const late: string[] = [];
    const refused = await waitFor(
      async () => {
        const open: number[] = [];
        await concurrently(n, CALLERS, async (i) => {
          for (const app of [a, b]) {
            const asked = performance.now();
            const res = await use(app, i);
            if (res.status === 401) continue;
            expect(res.status).to.equal(200);
            open.push(i);
            if (asked - (revokedAt[i] as number) > WITHIN_MS) late.push(`token ${i} accepted by ${app === a ? 'A' : 'B'} ${Math.round(asked - (revokedAt[i] as number))} ms after its revocation`);
          }
        });
        return open;
      },
      (open) => open.length === 0,
      15_000,
    );
    expect(refused.met, `${refused.value.length} tokens still accepted`).to.equal(true);
    expect(late.slice(0, 5), `${late.length} late acceptances`).to.deep.equal([]);
  });

  it('a change whose feed write fails is saved, answered 503 with Retry-After, and announced once the store takes it', async function () {
    this.timeout(120_000);
    const distributor = await a.world.org();
    const admin = await a.world.token('admin', distributor);
    const onB = b.world.as(admin);
    // B's tree, loaded before the change.
    expect((await onB.get<TreeAnswer>('/org/tree')).body.organizations.map((o) => o.id)).to.deep.equal([distributor]);

    const changes = `${prefix}-changes`;
    const child = uid('org');
    await es.indices.putSettings({ index: changes, settings: { 'index.blocks.write': true } });
    let res: ApiResponse;
    try {
      res = await a.admin.post('/admin/organizations', { id: child, name: 'Blocked feed', parentId: distributor });
    } finally {
      await es.indices.putSettings({ index: changes, settings: { 'index.blocks.write': false } });
    }
    expectErrorBody(res, 503);
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    // The record is saved: a retry is the caller's own conflict, and A knows the organization.
    expect((await a.admin.get<{ parentId: string }>(`/admin/organizations/${child}`)).body.parentId).to.equal(distributor);
    expectErrorBody(await a.admin.post('/admin/organizations', { id: child, name: 'Blocked feed', parentId: distributor }), 409);
    // B's tree learns it from the feed (A's outbox re-sends the entry), not from a lookup of its id.
    const seen = await waitFor(
      () => onB.get<TreeAnswer>('/org/tree'),
      (r) => r.status === 200 && r.body.organizations.some((o) => o.id === child),
      10_000,
    );
    expect(seen.met, `B's tree: ${seen.value.text}`).to.equal(true);
    // The outbox drains once the store takes its entries.
    const drained = await waitFor(
      () => a.admin.get<string>('/metrics'),
      (r) => /^ecs_change_feed_unsent 0$/m.test(r.text),
      10_000,
    );
    expect(drained.met, drained.value.text.split('\n').filter((l) => l.startsWith('ecs_change_feed')).join('\n')).to.equal(true);
  });
});
