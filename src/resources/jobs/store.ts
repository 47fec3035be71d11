/**
 * The jobs index: one document per bulk-action job, the only code that touches it.
 * The document is also the job's lease and its progress: a runner takes it with a write
 * conditional on the seq_no it read (like src/store/lease.ts, but on the job itself, so the
 * lease, the checkpoint and the counters move in one atomic write), and every checkpoint is
 * conditional on the runner's previous write. Who loses a conditional write has lost the job.
 */
import { DocStore, type Query, type SearchResult, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../store/page-query.js';
import type { UserKey } from '../../domain.js';
import type { Grant, Person } from '../../access/principal.js';
import type { EndpointCriteria } from '../endpoints/criteria.js';
import type { OrgScopedIndex } from '../../store/org-path.js';
import { conditionOn } from '../../store/doc-types.js';

export const JOB_STATES = ['QUEUED', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED'] as const;
export type JobState = (typeof JOB_STATES)[number];
/** States a runner may still take a job in. */
export const LIVE_JOB_STATES: readonly JobState[] = ['QUEUED', 'RUNNING'];
/** States a job ends in (its finishedAt is stamped once no runner holds it). */
export const FINISHED_JOB_STATES: readonly JobState[] = ['DONE', 'FAILED', 'CANCELLED'];

export const JOB_ACTION_TYPES = ['SEND_COMMAND', 'ENABLE_MODULE', 'DISABLE_MODULE', 'ASSIGN_LICENSE', 'SOFT_DELETE'] as const;
export type JobActionType = (typeof JOB_ACTION_TYPES)[number];

/** What a job does to each matching endpoint. */
export type JobAction =
  | { type: 'SEND_COMMAND'; command: string; args?: string[] }
  | { type: 'ENABLE_MODULE' | 'DISABLE_MODULE'; module: string }
  | { type: 'ASSIGN_LICENSE'; licenseType: string }
  | { type: 'SOFT_DELETE' };

/** The creator's identity, kept so every batch (on any instance) acts with the creator's reach. */
export interface JobCreator {
  role: 'system' | 'admin';
  name: string;
  tokenId?: string;
  orgId?: string;
  /** A person's admin grants (the job acts only where they reach); absent for tokens. */
  grants?: Grant[];
  person?: Person;
}

export interface JobFailure {
  endpointId: string;
  status: number;
  reason: string;
}

export interface JobDoc {
  id: string;
  state: JobState;
  /** The organization the job belongs to (who may read it): the criteria's org, else the creator's; absent: system only. */
  orgId?: string;
  action: JobAction;
  criteria: EndpointCriteria;
  creator: JobCreator;
  /** The "now" the criteria's inactivity window is computed from (fixed at creation, so a resumed scan matches alike). */
  criteriaAt: string;
  /** Endpoints matching when the scan started (on a resume: processed + those still ahead). */
  matched: number;
  done: number;
  failed: number;
  /** The first failures, with reasons (at most JOB_FAILURE_SAMPLE). */
  failures: JobFailure[];
  /** The id of the last endpoint whose outcome is counted: the scan resumes after it. */
  checkpoint?: string;
  /** Why the job FAILED (or was stopped). */
  reason?: string;
  cancelRequested?: boolean;
  leaseHolder?: string;
  leaseExpiresAt?: string;
  /** Consecutive runs that ended without a checkpoint (store trouble); bounded. */
  attempts: number;
  createdBy: UserKey;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  finishedAt?: string;
}

export type StoredJob = Stored<JobDoc>;

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const JOBS_ORG_SCOPE: OrgScopedIndex = { index: 'jobs', orgField: 'orgId' };

export class JobStore {
  private readonly docs: DocStore<JobDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<JobDoc>(ctx, JOBS_ORG_SCOPE.index, 'job', { orgField: JOBS_ORG_SCOPE.orgField });
  }

  /** Create-only; searchable when it returns (GET /jobs lists by search, other instances' runners find it by search). */
  create(doc: JobDoc): Promise<StoredJob> {
    return this.docs.create(doc.id, doc);
  }

  /** Realtime get. */
  get(id: string): Promise<StoredJob | undefined> {
    return this.docs.get(id);
  }

  /**
   * Full write conditional on `read` (WriteConflictError when anyone wrote since). Not waited
   * for visibility: readers of one job use realtime get; lists show it after the next refresh.
   */
  replace(doc: JobDoc, read: { seqNo: number; primaryTerm: number }): Promise<StoredJob> {
    return this.docs.put(doc.id, doc, { refresh: false, ...conditionOn(read) });
  }

  /**
   * The QUEUED and RUNNING jobs a token created. The creator's token is indexed from mapping
   * version 2; on an index still at version 1 (a rolling upgrade before the jobs index is
   * reindexed) no job has it indexed, so the query also takes every live job without it and
   * the creator is compared in memory: one query right under both mappings.
   */
  async liveCreatedBy(tokenId: string): Promise<StoredJob[]> {
    const live = await this.docs.all(
      {
        bool: {
          filter: [{ terms: { state: [...LIVE_JOB_STATES] } }],
          should: [{ term: { 'creator.tokenId': tokenId } }, { bool: { must_not: [{ exists: { field: 'creator.tokenId' } }] } }],
          minimum_should_match: 1,
        },
      },
      { sort: [{ id: 'asc' }] },
    );
    return live.filter((j) => j.doc.creator.tokenId === tokenId);
  }

  /**
   * Deletes the finished jobs whose finishedAt is before `cutoff` (retention); their ids. Each
   * delete is conditional on the scan's read, so a job that changed meanwhile is left for the next run.
   */
  async deleteFinishedBefore(cutoff: Date): Promise<string[]> {
    const query: Query = {
      bool: { filter: [{ terms: { state: [...FINISHED_JOB_STATES] } }, { range: { finishedAt: { lt: cutoff.toISOString() } } }] },
    };
    const deleted: string[] = [];
    for await (const page of this.docs.scan(query, { sort: [{ id: 'asc' }] })) {
      const res = await this.docs.bulk(
        page.map((j) => ({ delete: { _id: j.id, if_seq_no: j.seqNo, if_primary_term: j.primaryTerm } })),
        { refresh: false },
      );
      for (const item of res.items) if (item.delete?.result === 'deleted') deleted.push(item.delete._id as string);
    }
    return deleted;
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<JobDoc>> {
    return this.docs.search({ query, ...page });
  }

  /**
   * Jobs a runner may take at `now`, oldest first: live ones, and cancelled ones whose runner
   * died before it let go (to stamp finishedAt), without a lease or with an expired one.
   */
  async claimable(now: Date, size: number): Promise<StoredJob[]> {
    const res = await this.docs.search({
      query: {
        bool: {
          filter: [
            {
              bool: {
                should: [
                  { terms: { state: [...LIVE_JOB_STATES] } },
                  { bool: { filter: [{ term: { state: 'CANCELLED' } }], must_not: [{ exists: { field: 'finishedAt' } }] } },
                ],
                minimum_should_match: 1,
              },
            },
            {
              bool: {
                should: [
                  { bool: { must_not: [{ exists: { field: 'leaseExpiresAt' } }] } },
                  { range: { leaseExpiresAt: { lt: now.toISOString() } } },
                ],
                minimum_should_match: 1,
              },
            },
          ],
        },
      },
      sort: [{ createdAt: 'asc' }, { id: 'asc' }],
      size,
      track_total_hits: false,
    });
    return res.items;
  }
}
