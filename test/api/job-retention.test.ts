/**
 * Jobs over time: finished jobs are deleted after ECS_JOB_RETENTION_DAYS by the retention
 * mechanism heartbeats use (live jobs never), and revoking a token cancels the QUEUED and
 * RUNNING jobs it created, leaving finished ones and other tokens' jobs alone. An index prefix
 * of its own, so only this file's instance runs its jobs, slowly enough to catch them live.
 */
import { expect } from 'chai';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';

interface Job {
  id: string;
  state: 'QUEUED' | 'RUNNING' | 'DONE' | 'FAILED' | 'CANCELLED';
  done: number;
  reason?: string;
  finishedAt?: string;
}

const DAY = 86_400_000;
const ENV = {
  ECS_INDEX_PREFIX: `${RUN_PREFIX}-zjobret`,
  ECS_JOB_RATE_PER_SECOND: '2',
  ECS_JOB_BATCH_SIZE: '1',
  ECS_JOB_POLL_MS: '100',
  ECS_JOB_LEASE_SECONDS: '5',
  ECS_JOB_RETENTION_DAYS: '30',
};

describe('jobs: retention of finished jobs, cancellation by revocation', function () {
  this.timeout(300_000);
  let app: TestApp;
  let org: string;
  let tag: string;

  before(async () => {
    app = await startTestApp(ENV);
    org = await app.world.org();
    tag = uid('slow');
    // Enough agents that a job acting on them at 2 per second stays RUNNING through a test.
    for (let i = 0; i < 40; i++) await app.world.endpoint(org, { displayName: `${tag} agent-${i}` });
  });
  after(async () => {
    await app?.close();
  });

  /** An admin token of the org: its id and a client carrying it. */
  async function adminToken(): Promise<{ id: string; api: Api }> {
    const res = await app.admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('job-admin'), role: 'admin', orgId: org });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, api: app.world.as(res.body.token) };
  }

  async function create(as: Api, criteria: Record<string, unknown>): Promise<Job> {
    const res = await as.post<Job>('/jobs', { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId: org, ...criteria } });
    expect(res.status, res.text).to.equal(202);
    return res.body;
  }

  async function job(id: string): Promise<Job> {
    const res = await app.admin.get<Job>(`/jobs/${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  async function until(id: string, ok: (j: Job) => boolean, what: string): Promise<Job> {
    const w = await waitFor(() => job(id), ok, 60_000, 50);
    expect(w.met, `job ${id} ${what}: ${JSON.stringify(w.value)}`).to.equal(true);
    return w.value;
  }

  it('revoking a token cancels its QUEUED and RUNNING jobs; its finished jobs and other tokens’ jobs stay as they are', async () => {
    const creator = await adminToken();
    const other = await adminToken();
    const finished = await create(creator.api, { basic: uid('none') });
    await until(finished.id, (j) => j.state === 'DONE', 'not DONE');
    const running = await create(creator.api, { basic: tag });
    await until(running.id, (j) => j.state === 'RUNNING' && j.done > 0, 'not RUNNING');
    // One runner per instance: these wait behind the running one.
    const queued = await create(creator.api, { basic: tag });
    const othersJob = await create(other.api, { basic: tag });
    expect((await job(queued.id)).state).to.equal('QUEUED');

    const revoked = await app.admin.delete(`/admin/tokens/${creator.id}`);
    expect(revoked.status, revoked.text).to.equal(204);

    for (const id of [running.id, queued.id]) {
      const j = await job(id);
      expect(j.state, id).to.equal('CANCELLED');
      expect(j.reason).to.contain('revoked');
    }
    // The runner stops after the batch in flight and stamps finishedAt; nothing more is done.
    const over = await until(running.id, (j) => j.finishedAt !== undefined, 'not over');
    expect((await job(running.id)).done).to.equal(over.done);
    expect(over.done).to.be.below(40);
    expect((await job(finished.id)).state).to.equal('DONE');
    expect(['QUEUED', 'RUNNING']).to.include((await job(othersJob.id)).state);
    // The revoked token itself is refused, and a second revocation finds nothing more to cancel.
    expectErrorBody(await creator.api.get(`/jobs/${running.id}`), 401);
    expect((await app.admin.delete(`/admin/tokens/${creator.id}`)).status).to.equal(204);
    expect((await app.admin.delete(`/jobs/${othersJob.id}`)).status).to.equal(200);
  });

  it('finished jobs are deleted once ECS_JOB_RETENTION_DAYS have passed since they finished; live jobs never are', async () => {
    const { api } = await adminToken();
    const finished = await until((await create(api, { basic: uid('none') })).id, (j) => j.finishedAt !== undefined, 'not over');
    const live = await create(api, { basic: tag });
    await until(live.id, (j) => j.state === 'RUNNING', 'not RUNNING');
    const retention = app.server.handle.services.jobs.retention;

    const today = await retention.run(new Date());
    expect(today.acted).to.equal(true);
    expect(today.deleted).to.not.include(finished.id);
    expect((await app.admin.get(`/jobs/${finished.id}`)).status).to.equal(200);

    const later = await retention.run(new Date(Date.parse(finished.finishedAt ?? '') + 31 * DAY));
    expect(later.deleted).to.include(finished.id);
    expect(later.deleted).to.not.include(live.id);
    expectErrorBody(await app.admin.get(`/jobs/${finished.id}`), 404);
    expect((await job(live.id)).state).to.equal('RUNNING');
    expect((await app.admin.delete(`/jobs/${live.id}`)).status).to.equal(200);
  });
});
