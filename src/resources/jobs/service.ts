/**
 * Bulk actions as jobs (an extension): create, read, list and cancel. The work
 * itself is done by the JobRunner of whichever instance holds the job's lease (runner.ts).
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { toPage, type Page } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import type { PageRequest } from '../../domain.js';
import type { Query } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import type { EndpointCriteria } from '../endpoints/criteria.js';
import type { AgentScan } from '../endpoints/agent-scan.js';
import { LIVE_JOB_STATES, type JobAction, type JobDoc, type JobFailure, type JobState, type StoredJob, type JobStore } from './store.js';
import { leaseLive } from '../../store/lease.js';

/** A job as the API shows it. */
export interface Job {
  id: string;
  state: JobState;
  orgId?: string;
  action: JobAction;
  criteria: EndpointCriteria;
  matched: number;
  done: number;
  failed: number;
  failures: JobFailure[];
  reason?: string;
  createdBy: JobDoc['createdBy'];
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface NewJob {
  action: JobAction;
  criteria: EndpointCriteria;
  /** The caller means every agent of its subtree (required when the criteria narrow nothing). */
  allAgents: boolean;
}

/** What a job would act on now: POST /jobs/dry-run, and the count a created job's audit event keeps. */
export interface JobDryRun {
  matched: number;
  organizations: { orgId: string; count: number }[];
  allAgents: boolean;
  /** True when the person confirming should type the count (a SOFT_DELETE above ECS_JOB_CONFIRM_TYPED_COUNT). */
  typedConfirmation: boolean;
}

/** True when the criteria narrow nothing: they select every agent of the caller's subtree. */
export function selectsEverything(c: EndpointCriteria): boolean {
  return (
    c.orgId === undefined &&
    (c.basic === undefined || c.basic.trim() === '') &&
    (c.connectionStatuses === undefined || c.connectionStatuses.length === 0) &&
    c.hideInactiveAfterDays === undefined
  );
}

/**
 * 400 unless the request says what it selects: criteria that narrow nothing need
 * `allAgents: true`, and `allAgents: true` takes no narrowing criteria (a request that says
 * both means one of them by mistake).
 */
export function assertExplicitSelection(input: NewJob): void {
  const everything = selectsEverything(input.criteria);
  if (everything && !input.allAgents) {
    throw new BadRequestError(
      "body.criteria: criteria that narrow nothing select every agent of the caller's subtree; narrow them (orgId, basic, connectionStatuses, hideInactiveAfterDays) or say so with allAgents: true",
    );
  }
  if (!everything && input.allAgents) {
    throw new BadRequestError('body.allAgents: allAgents: true selects every agent of the subtree; it takes no narrowing criteria');
  }
}

export function toJob(hit: StoredJob): Job {
  const d = hit.doc;
  const out: Job = {
    id: d.id,
    state: d.state,
    action: d.action,
    criteria: d.criteria,
    matched: d.matched,
    done: d.done,
    failed: d.failed,
    failures: d.failures,
    createdBy: d.createdBy,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
  for (const k of ['orgId', 'reason', 'startedAt', 'finishedAt'] as const) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

/** The job CANCELLED now; without a live lease nobody is running it, so it is over at once (else its runner finishes it). */
function cancelled(d: JobDoc, reason?: string): JobDoc {
  const now = new Date().toISOString();
  const over = !leaseLive(d);
  return { ...d, state: 'CANCELLED', cancelRequested: true, updatedAt: now, ...(reason ? { reason } : {}), ...(over ? { finishedAt: now } : {}) };
}

export class JobService {
  constructor(
    private readonly store: JobStore,
    private readonly agents: AgentScan,
    /** ECS_JOB_CONFIRM_TYPED_COUNT: above this many agents a SOFT_DELETE's confirmation is typed. */
    private readonly confirmTypedCount: number,
    /** Tells this instance's runner a job is waiting (it takes it at once instead of at its next poll). */
    private readonly onCreated: () => void = () => undefined,
  ) {}

  /**
   * POST /jobs: a QUEUED job. The criteria's org is checked against the caller's subtree now
   * (403), and again, with the creator's identity kept in the job, at every step of the run.
   * `createdId` (an Idempotency-Key's) that exists is an earlier attempt: answered as it is now.
   */
  async create(input: NewJob, access: Access, createdId?: string): Promise<{ job: Job; matched: number }> {
    const p = access.principal;
    if (p.role !== 'system' && p.role !== 'admin') throw new ForbiddenError(`role ${p.role} may not create jobs`);
    assertExplicitSelection(input);
    const orgs = await access.resolveScope(input.criteria.orgId, false);
    const now = new Date().toISOString();
    // The count the job starts from, for its audit event (the runner counts again when it starts).
    const matched = await this.agents.count(input.criteria, orgs, Date.parse(now));
    const doc: JobDoc = {
      id: createdId ?? crypto.randomUUID(),
      state: 'QUEUED',
      ...((input.criteria.orgId ?? p.orgId) !== undefined ? { orgId: input.criteria.orgId ?? p.orgId } : {}),
      action: input.action,
      criteria: input.criteria,
      creator: {
        role: p.role,
        name: p.name,
        ...(p.tokenId ? { tokenId: p.tokenId } : {}),
        ...(p.orgId ? { orgId: p.orgId } : {}),
        // A person's job reaches where their admin grants do, not where they may only read.
        ...(p.grants ? { grants: p.grants.filter((g) => g.role !== 'reader'), ...(p.person ? { person: p.person } : {}) } : {}),
      },
      criteriaAt: now,
      matched: 0,
      done: 0,
      failed: 0,
      failures: [],
      attempts: 0,
      createdBy: access.userKey,
      createdAt: now,
      updatedAt: now,
    };
    try {
      const saved = await this.store.create(doc);
      this.onCreated();
      return { job: toJob(saved), matched };
    } catch (err) {
      const earlier = err instanceof ConflictError && createdId !== undefined ? await this.store.get(doc.id) : undefined;
      if (earlier) return { job: toJob(earlier), matched };
      throw err;
    }
  }

  /** POST /jobs/dry-run: what the job would act on now, by organization; nothing is created. */
  async dryRun(input: NewJob, access: Access): Promise<JobDryRun> {
    const p = access.principal;
    if (p.role !== 'system' && p.role !== 'admin') throw new ForbiddenError(`role ${p.role} may not create jobs`);
    assertExplicitSelection(input);
    const orgs = await access.resolveScope(input.criteria.orgId, false);
    const organizations = await this.agents.countByOrg(input.criteria, orgs, Date.now());
    const matched = organizations.reduce((n, o) => n + o.count, 0);
    const typedConfirmation = input.action.type === 'SOFT_DELETE' && matched > this.confirmTypedCount;
    return { matched, organizations, allAgents: input.allAgents, typedConfirmation };
  }

  /** A job the caller may read: 404 unknown, 403 outside the caller's subtree (a system job: system only). */
  private async visible(id: string, access: Access): Promise<StoredJob> {
    const hit = await this.store.get(id);
    if (!hit) throw new NotFoundError(`job ${id} not found`);
    if (!access.unrestricted) {
      if (hit.doc.orgId === undefined) throw new ForbiddenError("the record or organization is outside the token's organization subtree");
      await access.assertOrg(hit.doc.orgId);
    }
    return hit;
  }

  async get(id: string, access: Access): Promise<Job> {
    return toJob(await this.visible(id, access));
  }

  /** GET /jobs: newest first, within the caller's subtree, optionally of one state or organization. */
  async list(filter: { state?: JobState; orgId?: string }, pr: PageRequest, access: Access): Promise<Page<Job>> {
    const must: Query[] = [];
    if (filter.state) must.push({ term: { state: filter.state } });
    if (filter.orgId !== undefined) {
      await access.assertOrg(filter.orgId);
      must.push({ term: { orgId: filter.orgId } });
    }
    const scope = await access.orgFilter('orgId');
    if (scope) must.push(scope);
    if (pr.sort && pr.sort.length > 0) throw new BadRequestError('jobs are listed newest first; sort is not supported');
    const res = await this.store.search(
      { bool: { filter: must } },
      pageQuery(pr, { createdAt: 'createdAt' }, [{ field: 'createdAt', direction: 'DESC' }]),
    );
    return toPage(pr, res.total, res.items.map(toJob));
  }

  /**
   * DELETE /jobs/{id}: CANCELLED at once; the runner holding it stops after the batch in
   * flight (whose outcomes it still counts) and then stamps finishedAt. 409 for a job that
   * already ended otherwise; cancelling a cancelled job answers it as it is.
   */
  async cancel(id: string, access: Access): Promise<Job> {
    return readModifyWrite(async () => {
      const hit = await this.visible(id, access);
      const d = hit.doc;
      if (d.state === 'CANCELLED') return toJob(hit);
      if (d.state === 'DONE' || d.state === 'FAILED') throw new ConflictError(`job ${id} is ${d.state}; only QUEUED or RUNNING jobs can be cancelled`);
      return toJob(await this.store.replace(cancelled(d), hit));
    });
  }

  /**
   * A revoked token's QUEUED and RUNNING jobs are cancelled (docs/adr/0098-revoked-creator-cancels-jobs.md):
   * they act with its authority, which the revocation withdraws. Their runners stop after the
   * batch in flight, as for DELETE /jobs/{id}. Idempotent: a repeated revocation cancels
   * whatever is still live. The ids of the jobs cancelled.
   */
  async cancelCreatedBy(tokenId: string): Promise<string[]> {
    const ids: string[] = [];
    for (const job of await this.store.liveCreatedBy(tokenId)) {
      const done = await readModifyWrite(async () => {
        const hit = await this.store.get(job.id);
        if (!hit || !LIVE_JOB_STATES.includes(hit.doc.state)) return false;
        await this.store.replace(cancelled(hit.doc, `cancelled: the token that created it (${tokenId}) was revoked`), hit);
        return true;
      });
      if (done) ids.push(job.id);
    }
    return ids;
  }
}
