/**
 * Jobs under concurrent creates and cancels, as a model. Creates carry an Idempotency-Key from a
 * small pool: one job per key, every answer under a key is its first (a caller whose answer was
 * lost repeats with its key). Cancels race with the runner: a live job is CANCELLED once and
 * stays so (every cancel of it 200), a job the runner finished first is 409 to every cancel.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, faults, History, modelProperty, type Answer } from '../helpers/model/run.js';
import { waitFor } from '../helpers/wait.js';

interface Job {
  id: string;
  state: string;
}

interface Keys {
  /** The job each key created ('' when the create's answer was lost). */
  jobs: Record<string, string>;
}

const createModel: Model<Keys, { key: string }, Answer> = {
  step(s, { key }, answer) {
    const id = answer === undefined ? '' : (answer.body as Job).id;
    if (answer !== undefined && answer.status !== 202) return undefined;
    if (key in s.jobs) return s.jobs[key] === '' || answer === undefined || s.jobs[key] === id ? { jobs: { ...s.jobs, [key]: s.jobs[key] || id } } : undefined;
    return { jobs: { ...s.jobs, [key]: id } };
  },
};

type Phase = 'live' | 'cancelled' | 'finished';
type JobAct = { kind: 'cancel' } | { kind: 'runner finishes' };

const cancelModel: Model<Phase, JobAct, Answer> = {
  step(p, act, answer) {
    if (act.kind === 'runner finishes') return p === 'live' ? 'finished' : p;
    if (p === 'finished') return answer === undefined || answer.status === 409 ? p : undefined;
    if (answer === undefined) return 'cancelled';
    return answer.status === 200 && (answer.body as Job).state === 'CANCELLED' ? 'cancelled' : undefined;
  },
};

const phaseOf = (state: string): Phase => (state === 'CANCELLED' ? 'cancelled' : state === 'DONE' || state === 'FAILED' ? 'finished' : 'live');

describe('model: jobs under concurrent creates and cancels', () => {
  let org: string | undefined;
  modelProperty(
    'job creates with Idempotency-Key and cancels racing the runner, through two instances',
    fc.record({
      creators: fc.array(fc.record({ instance: fc.integer({ min: 0, max: 1 }), key: fc.integer({ min: 0, max: 1 }), jitter: fc.integer({ min: 0, max: 15 }) }), { minLength: 2, maxLength: 5 }),
      cancellers: fc.array(fc.record({ instance: fc.integer({ min: 0, max: 1 }), jitter: fc.integer({ min: 0, max: 30 }) }), { minLength: 1, maxLength: 4 }),
      fault: faults,
    }),
    async (c, s, k) => {
      const a = c.apps[0];
      if (org === undefined) {
        org = await a.world.org(undefined, uid('model-org'));
        for (let i = 0; i < 3; i++) await a.world.endpoint(org);
      }
      const orgId = org;
      const keys = [uid('job-key'), uid('job-key')];
      const body = { action: { type: 'ENABLE_MODULE', module: 'fim' }, criteria: { orgId } };
      const creates = new History<{ key: string }>(s);
      arm(c.proxy, k.fault, /^PUT \/[^/]*-(jobs|idempotency-keys)\/_(doc|create)\//);
      await creates.all(
        k.creators.map(async (p, who) => {
          const send = (): ReturnType<ReturnType<typeof client>['post']> => client(c, p.instance).post('/jobs', body, { headers: { 'Idempotency-Key': keys[p.key] } });
          const op = await creates.op(who, { key: keys[p.key] }, `caller ${who} creates under key ${p.key}`, p.jitter, send);
          if (op.answer === undefined) await creates.repeat(op, `caller ${who} repeats its create`, send);
        }),
      );
      const made = creates.check(createModel, { jobs: {} }, () => true, 'created');
      const ids = Object.values(made.jobs).filter((id) => id !== '');
      // Exactly one job per key that answered: the organization's jobs, counted through the API.
      const listed = await waitFor(
        () => a.admin.get<{ items: Job[] }>(`/jobs?orgId=${orgId}&size=100`),
        (r) => ids.every((id) => r.body.items?.some((j) => j.id === id)),
        5_000,
      );
      expect(listed.met, listed.value.text).to.equal(true);
      const ours = listed.value.body.items.filter((j) => ids.includes(j.id));
      expect(ours.length, 'one job per key').to.equal(new Set(ids).size);

      const jobId = ids[0];
      const cancels = new History<JobAct>(s);
      await cancels.all(
        k.cancellers.map(async (p, who) => {
          await cancels.op(who, { kind: 'cancel' }, `caller ${who} cancels`, p.jitter, () => client(c, p.instance).delete(`/jobs/${jobId}`));
        }),
      );
      // The runner may finish the job at any point of the run: an operation whose outcome nobody saw.
      cancels.ops.push({ caller: -1, input: { kind: 'runner finishes' }, invokedAt: 0, answeredAt: Infinity });
      const final = await a.admin.get<Job>(`/jobs/${jobId}`);
      expect(final.status, final.text).to.equal(200);
      cancels.check(cancelModel, 'live', (p) => p === phaseOf(final.body.state), final.body.state);
    },
  );
});
