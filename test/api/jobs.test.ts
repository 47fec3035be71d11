/**
 * Bulk actions as jobs: each action over a few hundred seeded agents acts on
 * exactly the matching ones within the caller's subtree; progress counters, cancel, failure
 * samples; and a job whose instance stops mid-run is finished by another instance without
 * acting twice (two app instances on one index prefix).
 */
import { expect } from 'chai';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type TestApp, type Tenants } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { commandsFor, loadCatalogue } from '../../src/resources/commands/catalogue.js';
import { jobCommandId } from '../../src/resources/jobs/actions.js';

interface Job {
  id: string;
  state: 'QUEUED' | 'RUNNING' | 'DONE' | 'FAILED' | 'CANCELLED';
  orgId?: string;
  matched: number;
  done: number;
  failed: number;
  failures: { endpointId: string; status: number; reason: string }[];
  reason?: string;
  startedAt?: string;
  finishedAt?: string;
}
interface Page<T> {
  totalCount: number;
  items: T[];
}

/**
 * Slow enough that a job over a few hundred agents spans many checkpoints, fast enough for a
 * test; an index prefix of its own, so only this file's two instances run its jobs.
 */
const ENV = { ECS_INDEX_PREFIX: `${RUN_PREFIX}-zjob`, ECS_JOB_RATE_PER_SECOND: '100', ECS_JOB_BATCH_SIZE: '10', ECS_JOB_POLL_MS: '100', ECS_JOB_LEASE_SECONDS: '5' };

/** Runs `fn` over `items`, `width` at a time. */
async function each<T, R>(items: T[], fn: (item: T) => Promise<R>, width = 16): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

describe('bulk actions as jobs', () => {
  let a: TestApp;
  let b: TestApp;
  let t: Tenants;

  before(async function () {
    this.timeout(180_000);
    a = await startTestApp(ENV);
    b = await startTestApp({ ...ENV, ECS_JOB_CONFIRM_TYPED_COUNT: '2' });
    t = await a.world.tenants();
  });
  const closed = new Set<TestApp>();
  after(async () => {
    await Promise.all([a, b].filter((x) => x && !closed.has(x)).map((x) => x.close()));
  });

  /** Seeds agents whose displayName starts with `tag` (so `{basic: tag}` matches them); returns their ids per org. */
  async function seed(tag: string, counts: Record<string, number>, fields: Record<string, unknown> = {}): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const [orgId, n] of Object.entries(counts)) {
      out[orgId] = await each(Array.from({ length: n }, (_, i) => i), async (i) => (await a.world.endpoint(orgId, { displayName: `${tag} agent-${i}`, ...fields })).id);
    }
    return out;
  }

  async function create(as: Api, body: unknown): Promise<Job> {
    const res = await as.post<Job>('/jobs', body);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.state).to.equal('QUEUED');
    return res.body;
  }

  /** Waits until the job is over (finishedAt stamped: nothing more happens to it). */
  async function finished(id: string, as: Api = a.admin, deadlineMs = 90_000): Promise<Job> {
    const w = await waitFor(() => as.get<Job>(`/jobs/${id}`), (r) => r.status === 200 && r.body.finishedAt !== undefined, deadlineMs, 50);
    expect(w.met, `job ${id} not over: ${w.value.text}`).to.equal(true);
    return w.value.body;
  }

  async function searchCount(tag: string): Promise<number> {
    const res = await a.admin.post<Page<unknown>>('/endpoint/page-search', { criteria: { basic: tag }, pageRequest: { size: 1 } });
    expect(res.status, res.text).to.equal(200);
    return res.body.totalCount;
  }

  describe('requests, roles and subtrees', () => {
    it('validates the action and the criteria, refuses readers and criteria outside the subtree', async () => {
      expectErrorBody(await t.adminA.post('/jobs', { action: { type: 'EXPLODE' }, criteria: {} }), 400);
      expectErrorBody(await t.adminA.post('/jobs', { action: { type: 'ENABLE_MODULE' } }), 400);
      expectErrorBody(await t.adminA.post('/jobs', { action: { type: 'ASSIGN_LICENSE', licenseType: 'NOPE' } }), 400);
      expectErrorBody(await t.adminA.post('/jobs', { action: { type: 'SOFT_DELETE' }, criteria: { hideInactiveAfterDays: -1 } }), 400);
      expectErrorBody(await t.readerA.post('/jobs', { action: { type: 'SOFT_DELETE' }, criteria: {} }), 403);
      expectErrorBody(await t.adminA.post('/jobs', { action: { type: 'SOFT_DELETE' }, criteria: { orgId: t.orgB } }), 403);
      expectErrorBody(await a.anon.post('/jobs', { action: { type: 'SOFT_DELETE' }, criteria: {} }), 401);
      expectErrorBody(await t.adminA.get(`/jobs/${uid('nope')}`), 404);
    });

    it("readers read their subtree's jobs; other tenants neither read nor cancel them", async () => {
      const tag = uid('tagr');
      const job = await create(t.adminA, { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { basic: tag } });
      expect(job.orgId).to.equal(t.orgA);
      expect((await t.readerA.get<Job>(`/jobs/${job.id}`)).status).to.equal(200);
      expectErrorBody(await t.adminB.get(`/jobs/${job.id}`), 403);
      expectErrorBody(await t.adminB.delete(`/jobs/${job.id}`), 403);
      expectErrorBody(await t.readerA.delete(`/jobs/${job.id}`), 403);
      const mine = await t.readerA.get<Page<Job>>('/jobs?size=100');
      expect(mine.status, mine.text).to.equal(200);
      expect(mine.body.items.map((j) => j.id)).to.include(job.id);
      const theirs = await t.adminB.get<Page<Job>>('/jobs?size=100');
      expect(theirs.body.items.map((j) => j.id)).to.not.include(job.id);
      const done = await finished(job.id);
      expect(done).to.include({ state: 'DONE', matched: 0, done: 0, failed: 0 });
      expectErrorBody(await t.adminA.delete(`/jobs/${job.id}`), 409);
    });
    it('an Idempotency-Key makes a repeated POST answer the same job; a system job is visible to system tokens only', async () => {
      const body = { action: { type: 'DISABLE_MODULE', module: 'pan' }, criteria: { basic: uid('none') } };
      const key = { headers: { 'Idempotency-Key': uid('key') } };
      const first = await t.adminA.post<Job>('/jobs', body, key);
      const again = await t.adminA.post<Job>('/jobs', body, key);
      expect([first.status, again.status], again.text).to.deep.equal([202, 202]);
      expect(again.body.id).to.equal(first.body.id);
      const system = await create(a.admin, body);
      expect(system.orgId).to.equal(undefined);
      expectErrorBody(await t.adminA.get(`/jobs/${system.id}`), 403);
      expect((await t.adminA.get<Page<Job>>('/jobs?size=100')).body.items.map((j) => j.id)).to.not.include(system.id);
      expect((await a.admin.get<Job>(`/jobs/${system.id}`)).status).to.equal(200);
      await Promise.all([finished(first.body.id), finished(system.id)]);
    });
  });

  describe('selecting everything is explicit', () => {
    interface DryRun {
      matched: number;
      organizations: { orgId: string; count: number }[];
      allAgents: boolean;
      typedConfirmation: boolean;
    }

    it('a job whose criteria narrow nothing is refused without allAgents, and allAgents with narrowing criteria is refused too', async () => {
      const before = (await t.adminA.get<Page<Job>>('/jobs?size=1')).body.totalCount;
      for (const body of [
        { action: { type: 'DISABLE_MODULE', module: 'fim' } },
        { action: { type: 'DISABLE_MODULE', module: 'fim' }, criteria: {} },
        { action: { type: 'SOFT_DELETE' }, criteria: { basic: '  ', showInactiveEndpoints: true } },
        { action: { type: 'SOFT_DELETE' }, criteria: {}, allAgents: false },
      ]) {
        const res = await t.adminA.post('/jobs', body);
        expectErrorBody(res, 400);
        expect((res.body as { message: string }).message).to.contain('allAgents: true');
      }
      const both = await t.adminA.post('/jobs', { action: { type: 'SOFT_DELETE' }, criteria: { basic: 'x' }, allAgents: true });
      expectErrorBody(both, 400);
      expect((both.body as { message: string }).message).to.contain('body.allAgents');
      // The refusals created nothing.
      expect((await t.adminA.get<Page<Job>>('/jobs?size=1')).body.totalCount).to.equal(before);
    });

    it('a dry run answers the count and the organizations without acting; the created job keeps criteria, count and confirmer in its audit event', async () => {
      const root = await a.world.org();
      const child = await a.world.org(root);
      const minted = await a.admin.post<{ id: string; token: string }>('/admin/tokens', { name: 'job-confirmer', role: 'admin', orgId: root });
      expect(minted.status, minted.text).to.equal(201);
      const admin = a.world.as(minted.body.token);
      const tag = uid('every');
      await seed(tag, { [root]: 3, [child]: 2 });
      const body = { action: { type: 'SOFT_DELETE' }, allAgents: true };
      const before = (await admin.get<Page<Job>>('/jobs?size=100')).body.totalCount;
      const dry = await admin.post<DryRun>('/jobs/dry-run', body);
      expect(dry.status, dry.text).to.equal(200);
      expect(dry.body).to.deep.equal({
        matched: 5,
        organizations: [
          { orgId: root, count: 3 },
          { orgId: child, count: 2 },
        ],
        allAgents: true,
        typedConfirmation: false,
      });
      // Nothing was created or deleted.
      expect((await admin.get<Page<Job>>('/jobs?size=100')).body.totalCount).to.equal(before);
      expect(await searchCount(tag)).to.equal(5);
      // The narrowed dry run counts only what its criteria select.
      const narrowed = await admin.post<DryRun>('/jobs/dry-run', { action: { type: 'SOFT_DELETE' }, criteria: { orgId: child } });
      expect(narrowed.body).to.include({ matched: 2, allAgents: false });

      const job = await create(admin, { action: { type: 'ENABLE_MODULE', module: 'fim' }, allAgents: true });
      expect((await finished(job.id)).matched).to.equal(5);
      interface AuditEvent {
        operation: string;
        status: number;
        details?: { criteria: unknown; allAgents: boolean; matched: number; dryRun: boolean; confirmedBy: { tokenId?: string; role: string } };
      }
      const events = await waitFor(
        () => a.admin.post<Page<AuditEvent>>('/audit/search-page', { criteria: { actorTokenId: minted.body.id }, pageRequest: { page: 0, size: 10 } }),
        (r) => r.status === 200 && r.body.totalCount >= 3,
        30_000,
        100,
      );
      expect(events.met, events.value.text).to.equal(true);
      const created = events.value.body.items.find((e) => e.operation === 'createJob' && e.status === 202);
      expect(created?.details).to.deep.equal({
        criteria: {},
        allAgents: true,
        dryRun: false,
        matched: 5,
        confirmedBy: { tokenId: minted.body.id, name: 'job-confirmer', role: 'admin' },
      });
      const dryEvents = events.value.body.items.filter((e) => e.operation === 'dryRunJob' && e.status === 200).map((e) => e.details?.matched);
      expect(dryEvents.sort()).to.deep.equal([2, 5]);
    });

    it('the deprecated POST /jobs?dryRun=true still answers the dry run, as POST /jobs/dry-run does, and creates nothing', async () => {
      const org = await a.world.org();
      const admin = a.world.as(await a.world.token('admin', org));
      await seed(uid('legacy'), { [org]: 2 });
      const body = { action: { type: 'DISABLE_MODULE', module: 'fim' }, allAgents: true };
      const dry = await admin.post<DryRun>('/jobs/dry-run', body);
      expect(dry.status, dry.text).to.equal(200);
      // A plain request: the document no longer declares this 200, which callers of API 1.0 still receive.
      const legacy = await fetch(`${admin.base}${P}/jobs?dryRun=true`, {
        method: 'POST',
        headers: { 'x-auth-token': admin.token ?? '', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(legacy.status).to.equal(200);
      expect(await legacy.json()).to.deep.equal(dry.body);
      expect(dry.body).to.include({ matched: 2, allAgents: true });
      expect((await admin.get<Page<Job>>('/jobs')).body.totalCount).to.equal(0);
    });

    it('a SOFT_DELETE matching more agents than ECS_JOB_CONFIRM_TYPED_COUNT asks for a typed confirmation', async () => {
      const org = await a.world.org();
      const admin = a.world.as(await a.world.token('admin', org));
      await seed(uid('typed'), { [org]: 3 });
      const typed = await b.world.as(await b.world.token('admin', org)).post<DryRun>('/jobs/dry-run', { action: { type: 'SOFT_DELETE' }, allAgents: true });
      expect(typed.status, typed.text).to.equal(200);
      // Instance b runs with a threshold of 2: three agents to soft-delete want the count typed; another action never does.
      expect(typed.body).to.include({ matched: 3, typedConfirmation: true });
      const other = await b.world.as(await b.world.token('admin', org)).post<DryRun>('/jobs/dry-run', { action: { type: 'DISABLE_MODULE', module: 'fim' }, allAgents: true });
      expect(other.body).to.include({ matched: 3, typedConfirmation: false });
      expect((await admin.post<DryRun>('/jobs/dry-run', { action: { type: 'SOFT_DELETE' }, allAgents: true })).body.typedConfirmation).to.equal(false);
    });
  });

  describe('actions', () => {
    it('SOFT_DELETE deletes exactly the matching agents of the subtree, not another tenant\'s', async function () {
      this.timeout(120_000);
      const tag = uid('tagd');
      const ids = await seed(tag, { [t.orgA]: 120, [t.childA]: 60, [t.orgB]: 50 });
      const job = await create(t.adminA, { action: { type: 'SOFT_DELETE' }, criteria: { basic: tag } });
      const end = await finished(job.id);
      expect(end).to.include({ state: 'DONE', matched: 180, done: 180, failed: 0 });
      expect(await searchCount(tag)).to.equal(50);
      const left = await a.admin.post<Page<{ orgId: string }>>('/endpoint/page-search', { criteria: { basic: tag }, pageRequest: { size: 100 } });
      expect(new Set(left.body.items.map((e) => e.orgId))).to.deep.equal(new Set([t.orgB]));
      expectErrorBody(await a.admin.get(`/endpoint/${ids[t.childA][0]}`), 404);
    });

    it('ENABLE_MODULE and DISABLE_MODULE set one module on exactly the matching agents, keeping the others', async function () {
      this.timeout(120_000);
      const tag = uid('tagm');
      const ids = await seed(tag, { [t.orgA]: 100, [t.orgB]: 30 });
      // A third already has a record of its own: the job sets the one field and keeps the rest.
      const own = ids[t.orgA].slice(0, 33);
      await each(own, async (id) => expect((await a.admin.post(`/endpoint/${id}/enabled-modules`, { fim: 'ACTIVE' })).status).to.equal(200));
      const enable = await finished((await create(t.adminA, { action: { type: 'ENABLE_MODULE', module: 'vuln' }, criteria: { basic: tag } })).id);
      expect(enable).to.include({ state: 'DONE', matched: 100, done: 100, failed: 0 });
      const modsA = await each(ids[t.orgA], async (id) => (await a.admin.get<Record<string, unknown>>(`/endpoint/${id}/enabled-modules`)).body);
      expect(modsA.every((m) => m.vuln === 'ACTIVE')).to.equal(true);
      expect(modsA.filter((m) => m.fim === 'ACTIVE')).to.have.length(33);
      const modsB = await each(ids[t.orgB], async (id) => (await a.admin.get(`/endpoint/${id}/enabled-modules`)).status);
      expect(modsB.every((s) => s === 404)).to.equal(true);

      const disable = await finished((await create(t.adminA, { action: { type: 'DISABLE_MODULE', module: 'vuln' }, criteria: { basic: tag, orgId: t.orgA } })).id);
      expect(disable).to.include({ state: 'DONE', matched: 100, done: 100, failed: 0 });
      const after = await each(ids[t.orgA], async (id) => (await a.admin.get<Record<string, unknown>>(`/endpoint/${id}/enabled-modules`)).body);
      expect(after.every((m) => m.vuln === 'INACTIVE')).to.equal(true);
      expect(after.filter((m) => m.fim === 'ACTIVE')).to.have.length(33);
    });

    it("ASSIGN_LICENSE gives each matching agent its license of that type; a second job changes the type, not the state", async function () {
      this.timeout(120_000);
      const tag = uid('tagl');
      const ids = await seed(tag, { [t.childA]: 80, [t.orgB]: 20 });
      const first = await finished((await create(t.adminA, { action: { type: 'ASSIGN_LICENSE', licenseType: 'ATC' }, criteria: { basic: tag } })).id);
      expect(first).to.include({ state: 'DONE', matched: 80, done: 80, failed: 0 });
      const lic = await each(ids[t.childA], async (id) => (await a.admin.get<Record<string, unknown>>(`/license/${id}`)).body);
      for (const [k, l] of lic.entries()) expect(l).to.include({ id: ids[t.childA][k], ownerId: ids[t.childA][k], orgId: t.childA, type: 'ATC', state: 'CREATED' });
      const others = await each(ids[t.orgB], async (id) => (await a.admin.get(`/license/${id}`)).status);
      expect(others.every((s) => s === 404)).to.equal(true);
      const activated = ids[t.childA][0];
      expect((await a.admin.patch(`/license/${activated}/state/ACTIVATED`)).status).to.equal(200);
      const second = await finished((await create(t.adminA, { action: { type: 'ASSIGN_LICENSE', licenseType: 'DCI' }, criteria: { basic: tag } })).id);
      expect(second).to.include({ state: 'DONE', matched: 80, done: 80, failed: 0 });
      expect((await a.admin.get(`/license/${activated}`)).body).to.include({ type: 'DCI', state: 'ACTIVATED' });
    });

    it('SEND_COMMAND queues one command per accepting agent and reports the others as failures with reasons', async function () {
      this.timeout(120_000);
      const tag = uid('tagc');
      const command = commandsFor(loadCatalogue(), 'windows')[0];
      const org = await a.world.org(t.orgA);
      expect((await a.admin.post(`/org/${org}/enabled-modules`, { cmd: 'ACTIVE' })).status).to.equal(200);
      const ids = await seed(tag, { [org]: 60 }, { hostInfo: { os: 'windows' } });
      const connected = ids[org].slice(0, 35);
      await each(connected, async (id) => expect((await a.admin.post(`/endpoint/${id}/connect`)).status).to.equal(204));
      const job = await finished((await create(t.adminA, { action: { type: 'SEND_COMMAND', command }, criteria: { basic: tag } })).id);
      expect(job).to.include({ state: 'DONE', matched: 60, done: 35, failed: 25 });
      expect(job.failures).to.have.length(20);
      for (const f of job.failures) {
        expect(connected).to.not.include(f.endpointId);
        expect(f.status).to.equal(409);
        expect(f.reason).to.match(/NEVER, not CONNECTED/);
      }
      const counts = await each(ids[org], async (id) => (await a.admin.get<Page<{ name: string }>>(`/command-message/endpoint/${id}`)).body);
      for (const [k, page] of counts.entries()) {
        expect(page.totalCount, ids[org][k]).to.equal(connected.includes(ids[org][k]) ? 1 : 0);
        if (page.totalCount === 1) expect(page.items[0].name).to.equal(command);
      }
    });
  });

  describe('progress, cancel, and another instance taking over', () => {
    it('counts progress as it goes, and a cancel stops it after the batch in flight', async function () {
      this.timeout(120_000);
      const tag = uid('tagx');
      await seed(tag, { [t.orgA]: 300 });
      const job = await create(t.adminA, { action: { type: 'SOFT_DELETE' }, criteria: { basic: tag } });
      const seen: Job[] = [];
      const progress = await waitFor(
        async () => (await a.admin.get<Job>(`/jobs/${job.id}`)).body,
        (j) => {
          seen.push(j);
          return j.done >= 30;
        },
        60_000,
      );
      expect(progress.met, JSON.stringify(progress.value)).to.equal(true);
      expect(progress.value).to.include({ state: 'RUNNING', matched: 300 });
      const dones = seen.map((j) => j.done);
      expect(dones).to.deep.equal([...dones].sort((x, y) => x - y));
      const cancelled = await t.adminA.delete<Job>(`/jobs/${job.id}`);
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body.state).to.equal('CANCELLED');
      const end = await finished(job.id);
      expect(end.state).to.equal('CANCELLED');
      expect(end.done).to.be.lessThan(300);
      // Exactly what it counted was done, and nothing after it let go.
      await Promise.all([a.server.handle.services.jobs.runner.idle(), b.server.handle.services.jobs.runner.idle()]);
      expect(300 - (await searchCount(tag))).to.equal(end.done);
      expect((await t.adminA.delete<Job>(`/jobs/${job.id}`)).body.state).to.equal('CANCELLED');
    });

    /** Agents in a new child org of A with the cmd module ACTIVE, CONNECTED, tagged `tag`; with a command they accept. */
    async function commandable(tag: string, n: number): Promise<{ ids: string[]; command: string }> {
      const command = commandsFor(loadCatalogue(), 'windows')[0];
      const org = await a.world.org(t.orgA);
      expect((await a.admin.post(`/org/${org}/enabled-modules`, { cmd: 'ACTIVE' })).status).to.equal(200);
      const ids = (await seed(tag, { [org]: n }, { hostInfo: { os: 'windows' } }))[org];
      await each(ids, async (id) => expect((await a.admin.post(`/endpoint/${id}/connect`)).status).to.equal(204));
      return { ids, command };
    }

    it("an organization moved out of the creator's subtree mid-run: the instance that resumes the job fails it", async function () {
      this.timeout(180_000);
      const tag = uid('tagm');
      const org = await a.world.org(t.orgA);
      const seeded = await seed(tag, { [org]: 300 });
      const job = await create(t.adminA, { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { basic: tag, orgId: org } });
      const first = await waitFor(() => a.admin.get<Job>(`/jobs/${job.id}`), (r) => r.body.done > 0, 60_000, 10);
      expect(first.met).to.equal(true);
      // Both runners stop (the holder's batch in flight is left to be replayed), so the move lands
      // while the job is surely unfinished, whatever the machine's speed.
      await Promise.all([a, b].map((x) => x.server.handle.services.jobs.runner.stop()));
      try {
        const paused = (await a.admin.get<Job>(`/jobs/${job.id}`)).body;
        expect(paused.state).to.equal('RUNNING');
        expect(paused.done + paused.failed).to.be.lessThan(300);
        const moved = await a.admin.patch(`/admin/organizations/${org}`, { parentId: t.orgB });
        expect(moved.status, moved.text).to.equal(200);
        // The other instance learns of the move through the change feed (ECS_CHANGE_POLL_MS): once
        // the creator is refused an agent of the moved organization there, b resumes the job.
        const asCreatorOnB = b.world.as(t.adminA.token);
        const seen = await waitFor(() => asCreatorOnB.get(`/endpoint/${seeded[org][0]}`), (r) => r.status === 403, 30_000, 20);
        expect(seen.met, 'instance b never saw the organization move').to.equal(true);
        // The instance that resumes it re-resolves the criteria against the creator's subtree: FAILED.
        b.server.handle.services.jobs.runner.start();
        const end = await finished(job.id, b.admin);
        expect(end.state, JSON.stringify(end)).to.equal('FAILED');
        expect(end.reason).to.match(/outside the token's organization subtree/);
        expect(end.done + end.failed).to.be.lessThan(300);
      } finally {
        for (const x of [a, b]) x.server.handle.services.jobs.runner.start();
      }
    });

    it('a job whose instance loses its store mid-run keeps its lease until it expires; then the other instance finishes it, acting on no agent twice', async function () {
      this.timeout(180_000);
      const tag = uid('tagz');
      const { ids, command } = await commandable(tag, 150);
      const job = await create(t.adminA, { action: { type: 'SEND_COMMAND', command }, criteria: { basic: tag } });
      const first = await waitFor(() => a.admin.get<Job>(`/jobs/${job.id}`), (r) => r.body.done > 0, 60_000, 10);
      expect(first.met).to.equal(true);
      const [holder, other] = a.server.handle.services.jobs.runner.current === job.id ? [a, b] : [b, a];
      expect(holder.server.handle.services.jobs.runner.current).to.equal(job.id);
      // The holder's store goes away in the middle of its work: it can neither checkpoint nor give the lease up.
      await holder.server.store.client.close();
      const lostAt = Date.now();
      const end = await finished(job.id, other.admin);
      expect(end).to.include({ state: 'DONE', matched: 150, done: 150, failed: 0 });
      expect(other.logs.some((l) => l.includes('"job resumed"') && l.includes(job.id))).to.equal(true);
      // Not before the lease (ECS_JOB_LEASE_SECONDS=5) ran out: the holder never gave it up.
      const resumedLine = other.logs.find((l) => l.includes('"job resumed"') && l.includes(job.id)) as string;
      expect(Date.parse((JSON.parse(resumedLine) as { time: string }).time)).to.be.greaterThan(lostAt + 1000);
      const counts = await each(ids, async (id) => (await other.admin.get<Page<unknown>>(`/command-message/endpoint/${id}`)).body.totalCount);
      expect(counts.filter((c) => c !== 1), 'agents without exactly one command').to.deep.equal([]);
      // A fresh instance in place of the dead one, for the next test.
      closed.add(holder);
      await holder.close().catch(() => undefined);
      const fresh = await startTestApp(ENV);
      if (holder === a) {
        a = fresh;
        t = { ...t, adminA: a.world.as(t.adminA.token), readerA: a.world.as(t.readerA.token), adminB: a.world.as(t.adminB.token) };
      } else b = fresh;
    });

    it('a job whose instance stops mid-run is finished by the other instance, acting on no agent twice', async function () {
      this.timeout(180_000);
      const tag = uid('tagk');
      const { ids, command } = await commandable(tag, 200);
      const job = await create(t.adminA, { action: { type: 'SEND_COMMAND', command }, criteria: { basic: tag } });
      // Whichever instance took it: after its first checkpoint, wait until it has acted on the first agent
      // of a batch it has not checkpointed yet (agents go in id order), then stop its runner and the instance.
      const order = [...ids].sort();
      const first = await waitFor(() => a.admin.get<Job>(`/jobs/${job.id}`), (r) => r.body.done > 0, 60_000, 10);
      expect(first.met).to.equal(true);
      const [holder, other] = a.server.handle.services.jobs.runner.current === job.id ? [a, b] : [b, a];
      expect(holder.server.handle.services.jobs.runner.current).to.equal(job.id);
      const midBatch = await waitFor(
        async () => {
          const done = (await a.admin.get<Job>(`/jobs/${job.id}`)).body.done;
          if (done >= order.length) return false;
          // A realtime get of the command the job creates for that agent: a batch's writes become
          // searchable together only before its checkpoint (store/visibility.ts withDeferredVisibility).
          const acted = (await a.admin.get(`/command-message/${jobCommandId(job.id, order[done])}`)).status === 200;
          return acted && (await a.admin.get<Job>(`/jobs/${job.id}`)).body.done === done;
        },
        (v) => v,
        60_000,
        0,
      );
      expect(midBatch.met, 'never saw the runner between an action and its checkpoint').to.equal(true);
      await holder.server.handle.services.jobs.runner.stop();
      closed.add(holder);
      await holder.close();
      const abandoned = holder.logs.find((l) => l.includes('job batch abandoned'));
      expect(abandoned, 'the stopped runner left a batch uncounted').to.be.a('string');
      expect((JSON.parse(abandoned as string) as { acted: number }).acted).to.be.greaterThan(0);
      const stoppedAt = (await other.admin.get<Job>(`/jobs/${job.id}`)).body;
      expect(stoppedAt.state).to.equal('RUNNING');
      expect(stoppedAt.done).to.be.lessThan(200);
      const end = await finished(job.id, other.admin);
      expect(end).to.include({ state: 'DONE', matched: 200, done: 200, failed: 0 });
      expect(other.logs.some((l) => l.includes('"job resumed"') && l.includes(job.id))).to.equal(true);
      const counts = await each(ids, async (id) => (await other.admin.get<Page<unknown>>(`/command-message/endpoint/${id}`)).body.totalCount);
      expect(counts.filter((c) => c !== 1), 'agents without exactly one command').to.deep.equal([]);
    });
  });
});
