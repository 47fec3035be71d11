/**
 * Two instances on one store: a change made through instance A reaches the caches
 * of instance B within a second, through the change feed, although B caches verified tokens
 * and the organization tree for 30 s (ECS_TOKEN_CACHE_SECONDS, ECS_ORG_CACHE_SECONDS).
 */
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

/** The bound within which a change reaches every instance. */
const WITHIN_MS = 1000;

describe('several instances on one store', () => {
  let a: TestApp;
  let b: TestApp;

  before(async function () {
    this.timeout(120_000);
    // Long caches make the feed the only way B can learn of a change in time.
    const env = { ECS_TOKEN_CACHE_SECONDS: '300', ECS_ORG_CACHE_SECONDS: '300' };
    a = await startTestApp(env);
    b = await startTestApp(env);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** Mints a token through A; returns its id and clients for both instances. */
  async function mint(role: 'admin' | 'reader', orgId: string): Promise<{ id: string; onA: Api; onB: Api }> {
    const res = await a.admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('tok'), role, orgId });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, onA: a.world.as(res.body.token), onB: b.world.as(res.body.token) };
  }

  const setConfig = (as: Api, orgId: string): ReturnType<Api['post']> => as.post('/config/org', { orgId, fields: { enableFim: true } });

  it('a token revoked on A is refused by B within a second', async () => {
    const org = await a.world.org();
    const tok = await mint('admin', org);
    // B verifies the token and caches it.
    expect((await setConfig(tok.onB, org)).status).to.equal(201);
    expect((await tok.onB.get(`/config/org/${org}`)).status).to.equal(200);

    expect((await a.admin.delete(`/admin/tokens/${tok.id}`)).status).to.equal(204);
    expectErrorBody(await tok.onA.get(`/config/org/${org}`), 401);
    const refused = await waitFor(() => tok.onB.get(`/config/org/${org}`), (r) => r.status === 401, 10_000);
    expect(refused.met, `B still accepted the revoked token after ${Math.round(refused.elapsedMs)} ms`).to.equal(true);
    expect(refused.elapsedMs).to.be.lessThan(WITHIN_MS);
    expectErrorBody(refused.value, 401);
  });

  it('an organization created on A takes writes scoped to it on B within a second', async () => {
    const parent = await a.world.org();
    const admin = await mint('admin', parent);
    // B loads its tree (and caches the parent's subtree without the new child).
    expect((await setConfig(admin.onB, parent)).status).to.equal(201);
    const child = await a.world.org(parent);
    const accepted = await waitFor(() => setConfig(admin.onB, child), (r) => r.status === 201, 10_000);
    expect(accepted.met, `B answered ${accepted.value.status}`).to.equal(true);
    expect(accepted.elapsedMs).to.be.lessThan(WITHIN_MS);
    expect((await admin.onB.get<{ orgId: string }>(`/config/org/${child}`)).body.orgId).to.equal(child);
  });

  it('an organization moved (with its subtree) and renamed on A is seen so by B within a second', async () => {
    const [p1, p2] = await Promise.all([a.world.org(), a.world.org()]);
    const x = await a.world.org(p1);
    const x1 = await a.world.org(x);
    const [admin1, admin2] = await Promise.all([mint('admin', p1), mint('admin', p2)]);
    // B's tree: x and x1 under p1.
    expect((await setConfig(admin1.onB, x1)).status).to.equal(201);
    expectErrorBody(await setConfig(admin2.onB, x1), 403);

    const moved = await a.admin.patch<{ id: string; name: string; parentId?: string }>(`/admin/organizations/${x}`, { parentId: p2, name: 'Moved X' });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body).to.include({ id: x, parentId: p2, name: 'Moved X' });

    const seen = await waitFor(() => setConfig(admin2.onB, x1), (r) => r.status === 201, 10_000);
    expect(seen.met, `B answered ${seen.value.status}`).to.equal(true);
    expect(seen.elapsedMs).to.be.lessThan(WITHIN_MS);
    expectErrorBody(await setConfig(admin1.onB, x1), 403);
    expectErrorBody(await setConfig(admin1.onB, x), 403);
    const onB = await b.admin.get<{ name: string; parentId?: string }>(`/admin/organizations/${x}`);
    expect(onB.body).to.include({ name: 'Moved X', parentId: p2 });

    // The subtree's stored ancestors moved too: p2 is now above x1, so p2 cannot go below x1.
    expectErrorBody(await a.admin.patch(`/admin/organizations/${p2}`, { parentId: x1 }), 400);
    const again = await a.admin.patch(`/admin/organizations/${x1}`, { parentId: null });
    expect(again.status, again.text).to.equal(200);
    const rooted = await waitFor(() => setConfig(admin2.onB, x1), (r) => r.status === 403, 10_000);
    expect(rooted.met).to.equal(true);
    expect((await a.admin.get<{ parentId?: string }>(`/admin/organizations/${x1}`)).body).to.not.have.property('parentId');
  });

  it('a move below its own subtree is 400, an unknown parent 404, an empty body 400', async () => {
    const x = await a.world.org();
    const x1 = await a.world.org(x);
    expectErrorBody(await a.admin.patch(`/admin/organizations/${x}`, { parentId: x1 }), 400);
    expectErrorBody(await a.admin.patch(`/admin/organizations/${x}`, { parentId: x }), 400);
    expectErrorBody(await a.admin.patch(`/admin/organizations/${x}`, { parentId: uid('nope') }), 404);
    expectErrorBody(await a.admin.patch(`/admin/organizations/${uid('nope')}`, { name: 'n' }), 404);
    expectErrorBody(await a.admin.patch(`/admin/organizations/${x}`, {}), 400);
    const reader = await mint('reader', x);
    expectErrorBody(await reader.onA.patch(`/admin/organizations/${x}`, { name: 'n' }), 403);
  });
});
