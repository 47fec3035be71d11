/**
 * The background runner of bulk-action jobs, one per instance, started and
 * stopped with the instance's other background tasks (src/server.ts).
 *
 * A job is run by whichever instance holds its lease: a lease held in the job document
 * itself, taken and renewed by writes conditional on the seq_no the runner last read or
 * wrote. The run scans the matching agents (the page search's query AND-ed with the
 * creator's subtree) with a point in time and search_after in `id` order, from after the
 * job's checkpoint; after each batch one conditional write moves the checkpoint, adds the
 * batch's outcomes to the counters and renews the lease. A runner that dies (or loses the
 * lease) leaves the last checkpoint behind; the next runner replays from there, and every
 * action is keyed or idempotent (actions.ts), so a replayed batch acts on nothing twice and
 * its outcomes are counted once (only a checkpoint write counts them).
 *
 * The rate is bounded per instance: one job at a time, one endpoint started every
 * 1/`ratePerSecond` s, at most `concurrency` in flight. A batch's writes are made searchable
 * together, by one refresh of each index they wrote before its checkpoint
 * (store/visibility.ts `withDeferredVisibility`), not one refresh wait per write.
 */
import { Access, type OrgTree } from '../../access/access.js';
import { WriteConflictError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { PolledWorker } from '../../periodic.js';
import type { AgentScan } from '../endpoints/agent-scan.js';
import { withDeferredVisibility } from '../../store/visibility.js';
import type { Query } from '../../store/doc-store.js';
import { inBatchSpan } from '../../trace-context.js';
import type { JobTargets } from './actions.js';
import { BatchActor, isTransient } from './batch-actor.js';
import { leaseLive } from '../../store/lease.js';
import type { JobDoc, JobFailure, JobStore, StoredJob } from './store.js';

/** Failures kept in the job (the first ones). */
export const JOB_FAILURE_SAMPLE = 20;
/** Consecutive runs ending in store trouble before the job is FAILED. */
const MAX_ATTEMPTS = 10;

export interface JobRunnerOptions {
  /** This instance's name in the lease. */
  holder: string;
  ratePerSecond: number;
  batchSize: number;
  leaseMs: number;
  pollMs: number;
  /** Actions in flight at once (default 16). */
  concurrency?: number;
}

/** How one run of a job ended. */
type RunEnd = 'finished' | 'stopped' | 'lost' | 'retry';


export class JobRunner extends PolledWorker {
  private readonly actor: BatchActor;
  private runningJob: string | undefined;

  constructor(
    private readonly store: JobStore,
    private readonly deps: { scan: AgentScan; targets: JobTargets; orgs: OrgTree },
    private readonly opts: JobRunnerOptions,
    private readonly log: Logger,
  ) {
    super('job runner poll', opts.pollMs, log);
    this.actor = new BatchActor(deps.targets, opts.ratePerSecond, opts.concurrency ?? 16, () => this.stopped, log);
  }

  /** The id of the job this runner holds now, if any. */
  get current(): string | undefined {
    return this.runningJob;
  }

  /** Takes the oldest claimable job, if any, and runs it to its end (or until stopped). */
  protected async pollOnce(): Promise<void> {
    while (!this.stopped) {
      const now = new Date();
      const candidates = await this.store.claimable(now, 5);
      let ran = false;
      for (const c of candidates) {
        const taken = await this.take(c.id, now);
        if (!taken) continue;
        ran = true;
        this.runningJob = taken.id;
        try {
          // A run that did not end its job (stopped, lost, store trouble) waits for the next poll.
          if (!(await this.run(taken))) return;
        } finally {
          this.runningJob = undefined;
        }
        break;
      }
      if (!ran) return;
    }
  }

  /** The lease on a job, by a write conditional on a fresh (realtime) read; undefined when another has it. */
  private async take(id: string, now: Date): Promise<StoredJob | undefined> {
    const cur = await this.store.get(id);
    if (!cur || leaseLive(cur.doc, now.getTime())) return undefined;
    const d = cur.doc;
    const live = d.state === 'QUEUED' || d.state === 'RUNNING';
    if (!live && !(d.state === 'CANCELLED' && d.finishedAt === undefined)) return undefined;
    const iso = now.toISOString();
    const next: JobDoc = live
      ? { ...d, state: 'RUNNING', leaseHolder: this.opts.holder, leaseExpiresAt: this.leaseUntil(), startedAt: d.startedAt ?? iso, updatedAt: iso }
      : this.released({ ...d, finishedAt: iso, updatedAt: iso });
    try {
      const saved = await this.store.replace(next, cur);
      return live ? saved : undefined;
    } catch (err) {
      if (err instanceof WriteConflictError) return undefined;
      throw err;
    }
  }

  private leaseUntil(): string {
    return new Date(Date.now() + this.opts.leaseMs).toISOString();
  }

  private released(d: JobDoc): JobDoc {
    const { leaseHolder: _h, leaseExpiresAt: _e, ...rest } = d;
    return rest;
  }

  /** The creator's reach, as when the job was created: role, organization, subtree (re-read from the tree). */
  private accessOf(d: JobDoc): Access {
    const c = d.creator;
    return new Access({ role: c.role, name: c.name, tokenId: c.tokenId, orgId: c.orgId, ...(c.grants ? { grants: c.grants } : {}), ...(c.person ? { person: c.person } : {}) }, this.deps.orgs);
  }

  /** Batch size: never so large that one batch at the configured rate outlasts a third of the lease. */
  private get batchSize(): number {
    return Math.max(1, Math.min(this.opts.batchSize, Math.floor((this.opts.ratePerSecond * this.opts.leaseMs) / 3000)));
  }

  /**
   * Runs a job whose lease this runner holds until it ends, is stopped or the lease is lost;
   * true when the job is over (DONE, FAILED or CANCELLED).
   */
  private async run(job: StoredJob): Promise<boolean> {
    let held = job;
    const d = job.doc;
    const access = this.accessOf(d);
    const now = Date.parse(d.criteriaAt);
    let end: RunEnd;
    try {
      // The creator's subtree, re-resolved on every (re)start: an org moved out of it since creation is refused (403).
      let orgs: Query | undefined;
      try {
        orgs = await access.resolveScope(d.criteria.orgId, false);
      } catch (err) {
        if (isTransient(err)) throw err;
        await this.finish(held, 'FAILED', (err as Error).message);
        return true;
      }
      const ahead = await this.deps.scan.count(d.criteria, orgs, now, d.checkpoint);
      held = await this.store.replace({ ...held.doc, matched: d.done + d.failed + ahead, updatedAt: new Date().toISOString() }, held);
      this.log.info({ job: d.id, matched: held.doc.matched, checkpoint: d.checkpoint ?? null }, d.checkpoint ? 'job resumed' : 'job started');
      end = 'finished';
      for await (const batch of this.deps.scan.scan(d.criteria, orgs, now, { afterId: d.checkpoint, batchSize: this.batchSize })) {
        const current = held;
        // One span per batch while tracing is on: its actions' store calls and its checkpoint.
        const step = await inBatchSpan(
          'job batch',
          [],
          { 'endpoint_control.job.id': d.id, 'endpoint_control.job.action': d.action.type, 'endpoint_control.batch.size': batch.length },
          async (span) => {
            // The batch's writes become searchable together, before the checkpoint counts them.
            const outcome = await withDeferredVisibility(() => this.actor.actOnBatch(current.doc, batch, access));
            span?.setAttribute('endpoint_control.batch.outcome', outcome.kind);
            if (outcome.kind !== 'complete') return outcome;
            return { kind: 'checkpointed' as const, next: await this.checkpoint(current, batch[batch.length - 1].id, outcome.done, outcome.failures) };
          },
        );
        if (step.kind !== 'checkpointed') {
          this.log.info({ job: d.id, acted: step.acted, batch: batch.length }, `job batch abandoned (${step.kind}); the next run replays it`);
          end = step.kind;
          break;
        }
        const next = step.next;
        if (next === 'lost' || next === 'cancelled') {
          if (next === 'cancelled') return true;
          end = 'lost';
          break;
        }
        held = next;
      }
    } catch (err) {
      if (err instanceof WriteConflictError) {
        await this.onConflict(held);
        return true;
      }
      this.log.warn({ job: d.id, err: { message: (err as Error).message } }, 'job run failed; the next run resumes from its checkpoint');
      end = 'retry';
    }
    if (end === 'finished') await this.finish(held, 'DONE');
    else if (end === 'stopped') await this.giveUp(held, false);
    else if (end === 'retry') await this.giveUp(held, true);
    return end === 'finished';
  }

  /** The job changed under the runner (a cancel): stamp it if it is ours and cancelled; otherwise leave it. */
  private async onConflict(held: StoredJob): Promise<void> {
    const cur = await this.store.get(held.id);
    if (!cur || cur.doc.leaseHolder !== this.opts.holder) return;
    if (cur.doc.state === 'CANCELLED') {
      const iso = new Date().toISOString();
      await this.store.replace(this.released({ ...cur.doc, finishedAt: iso, updatedAt: iso }), cur).catch(() => undefined);
    }
  }

  /** Ends the job (DONE or FAILED), giving up the lease; a concurrent cancel wins. */
  private async finish(held: StoredJob, state: 'DONE' | 'FAILED', reason?: string): Promise<void> {
    const iso = new Date().toISOString();
    try {
      await this.store.replace(this.released({ ...held.doc, state, ...(reason ? { reason } : {}), finishedAt: iso, updatedAt: iso }), held);
      this.log.info({ job: held.id, state, done: held.doc.done, failed: held.doc.failed, reason }, 'job ended');
    } catch (err) {
      if (err instanceof WriteConflictError) return this.onConflict(held);
      throw err;
    }
  }

  /** Gives the lease up without ending the job (stopped, or store trouble: counted toward MAX_ATTEMPTS). */
  private async giveUp(held: StoredJob, trouble: boolean): Promise<void> {
    const iso = new Date().toISOString();
    const attempts = trouble ? held.doc.attempts + 1 : held.doc.attempts;
    const failed = attempts >= MAX_ATTEMPTS;
    const next: JobDoc = this.released({
      ...held.doc,
      attempts,
      updatedAt: iso,
      ...(failed ? { state: 'FAILED' as const, reason: `stopped after ${attempts} runs ended in store errors`, finishedAt: iso } : {}),
    });
    await this.store.replace(next, held).catch((err: unknown) => {
      if (err instanceof WriteConflictError) return this.onConflict(held);
      this.log.warn({ job: held.id, err: { message: (err as Error).message } }, 'job lease not given up; it expires');
    });
  }

  /**
   * The batch's outcomes and next checkpoint in one write conditional on the runner's last
   * one (which also renews the lease). 'cancelled': it was cancelled meanwhile (the batch is
   * counted on the cancelled job, which is then over); 'lost': another runner has it now (the
   * batch is not counted here: that runner replays it).
   */
  private async checkpoint(
    held: StoredJob,
    lastId: string,
    done: number,
    failures: JobFailure[],
  ): Promise<StoredJob | 'cancelled' | 'lost'> {
    const add = (d: JobDoc): JobDoc => ({
      ...d,
      done: d.done + done,
      failed: d.failed + failures.length,
      failures: [...d.failures, ...failures].slice(0, JOB_FAILURE_SAMPLE),
      checkpoint: lastId,
      attempts: 0,
      updatedAt: new Date().toISOString(),
    });
    try {
      return await this.store.replace({ ...add(held.doc), leaseExpiresAt: this.leaseUntil() }, held);
    } catch (err) {
      if (!(err instanceof WriteConflictError)) throw err;
    }
    const cur = await this.store.get(held.id);
    if (!cur || cur.doc.leaseHolder !== this.opts.holder || cur.doc.checkpoint !== held.doc.checkpoint) return 'lost';
    if (cur.doc.state === 'CANCELLED') {
      const iso = new Date().toISOString();
      await this.store.replace(this.released({ ...add(cur.doc), finishedAt: iso }), cur);
      this.log.info({ job: held.id, done: cur.doc.done + done }, 'job cancelled');
      return 'cancelled';
    }
    return 'lost';
  }
}
