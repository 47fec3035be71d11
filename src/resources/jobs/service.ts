/**
 * Bulk actions as jobs (an extension): create, read, list and cancel. The work
 * itself is done by the JobRunner of whichever instance holds the job's lease (runner.ts).
 */
import crypto from 'node:crypto';
import type { Access } from '../../http/auth.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { toPage, type Page } from '../../http/paging.js';
import { pageQuery } from '../../store/page-query.js';
import type { PageRequest } from '../../domain.js';
import type { Query } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import type { EndpointCriteria } from '../endpoints/criteria.js';
import type { JobAction, JobDoc, JobFailure, JobState, StoredJob, JobStore } from './store.js';

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

/** True when a lease on the job is held at `now`. */
export function leaseLive(doc: JobDoc, now = Date.now()): boolean {
  return doc.leaseHolder !== undefined && doc.leaseExpiresAt !== undefined && Date.parse(doc.leaseExpiresAt) > now;
}

export class JobService {
  constructor(
    private readonly store: JobStore,
    /** Tells this instance's runner a job is waiting (it takes it at once instead of at its next poll). */
    private readonly onCreated: () => void = () => undefined,
  ) {}

  /**
   * POST /jobs: a QUEUED job. The criteria's org is checked against the caller's subtree now
   * (403), and again, with the creator's identity kept in the job, at every step of the run.
   * `createdId` (an Idempotency-Key's) that exists is an earlier attempt: answered as it is now.
   */
  async create(input: NewJob, access: Access, createdId?: string): Promise<Job> {
    const p = access.principal;
    if (p.role !== 'system' && p.role !== 'admin') throw new ForbiddenError(`role ${p.role} may not create jobs`);
    await access.resolveScope(input.criteria.orgId, false);
    const now = new Date().toISOString();
    const doc: JobDoc = {
      id: createdId ?? crypto.randomUUID(),
      state: 'QUEUED',
      ...((input.criteria.orgId ?? p.orgId) !== undefined ? { orgId: input.criteria.orgId ?? p.orgId } : {}),
      action: input.action,
      criteria: input.criteria,
      creator: { role: p.role, name: p.name, ...(p.tokenId ? { tokenId: p.tokenId } : {}), ...(p.orgId ? { orgId: p.orgId } : {}) },
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
      return toJob(saved);
    } catch (err) {
      const earlier = err instanceof ConflictError && createdId !== undefined ? await this.store.get(doc.id) : undefined;
      if (earlier) return toJob(earlier);
      throw err;
    }
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
      const now = new Date().toISOString();
      // Without a live lease nobody is running it: it is over now. Otherwise its runner finishes it.
      const over = !leaseLive(d);
      const next: JobDoc = { ...d, state: 'CANCELLED', cancelRequested: true, updatedAt: now, ...(over ? { finishedAt: now } : {}) };
      return toJob(await this.store.replace(next, hit));
    });
  }
}
