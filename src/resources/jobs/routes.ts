/** Bulk actions as jobs: extensions beyond the spec. */
import { READERS, WRITERS } from '../../access/principal.js';
import type { Access } from '../../access/access.js';
import { routeDefaults, ok, type Reply, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import type { JobState } from './store.js';
import type { JobService, NewJob } from './service.js';
import { createJobQuery, jobDryRun, jobIdParams, jobListQuery, jobRecord, newJob, pageJob } from './schema.js';

/** Who confirmed a job: the principal whose request created it (a token, or a person's login session). */
function confirmer(access: Access): { tokenId?: string; name: string; role: string } {
  const p = access.principal;
  return { ...(p.tokenId ? { tokenId: p.tokenId } : {}), name: p.name, role: p.role };
}

/** What a job's audit event keeps of its request: the criteria, allAgents and who confirmed it. */
function confirmation(body: NewJob, access: Access): Record<string, unknown> {
  return { criteria: body.criteria, allAgents: body.allAgents, confirmedBy: confirmer(access) };
}

/** A dry run's answer (POST /jobs/dry-run, and the deprecated POST /jobs?dryRun=true); its audit event keeps the count. */
async function dryRunReply(svc: JobService, body: NewJob, access: Access): Promise<Reply> {
  const dry = await svc.dryRun(body, access);
  return { status: 200, body: dry, audit: { ...confirmation(body, access), dryRun: true, matched: dry.matched } };
}

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'job', sec: true, roles: READERS, errors: [400, 401, 403, 500] });

export function jobRoutes(svc: JobService): RouteSpec[] {
  return [
    route<Record<string, never>, { dryRun: boolean }, NewJob>({
      operationId: 'createJob',
      method: 'POST',
      path: '/jobs',
      summary:
        "Start a bulk action (send a command, enable or disable a module, assign a license type, soft-delete) on every agent matching EndpointCriteria within the caller's subtree; answers 202 with the QUEUED job. Criteria that narrow nothing need allAgents: true. What a job would act on, without starting it: POST /jobs/dry-run",
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      idempotent: true,
      query: createJobQuery,
      body: newJob,
      // The deprecated ?dryRun=true still answers 200 with a JobDryRun, undeclared here so that
      // this operation has one success body (docs/adr/0122-dry-run-an-operation-of-its-own.md).
      responses: { 202: { description: 'Accepted: the job, QUEUED', schema: jobRecord } },
      handler: async ({ query, body, access, createdId }) => {
        if (query.dryRun) return dryRunReply(svc, body, access);
        const { job, matched } = await svc.create(body, access, createdId);
        return { status: 202, body: job, audit: { ...confirmation(body, access), dryRun: false, matched } };
      },
    }),
    route<Record<string, never>, Record<string, never>, NewJob>({
      operationId: 'dryRunJob',
      method: 'POST',
      path: '/jobs/dry-run',
      summary:
        "What a bulk action would act on now, without starting it: how many agents match the NewJob's criteria within the caller's subtree, in which organizations, and whether the person confirming it must type the count",
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      body: newJob,
      responses: { 200: { description: 'How many agents the job would act on, by organization; nothing was created', schema: jobDryRun } },
      handler: async ({ body, access }) => dryRunReply(svc, body, access),
    }),
    route<Record<string, never>, { state?: JobState; orgId?: string; page: number; size: number }>({
      operationId: 'listJobs',
      method: 'GET',
      path: '/jobs',
      summary: "Jobs within the caller's subtree, newest first, optionally of one state or organization",
      lane: 'interactive',
      extension: true,
      query: jobListQuery,
      responses: { 200: { description: 'OK', schema: pageJob } },
      handler: async ({ query, access }) => {
        const pr: PageRequest = { page: query.page, size: query.size };
        return ok(await svc.list({ state: query.state, orgId: query.orgId }, pr, access));
      },
    }),
    route<{ id: string }>({
      operationId: 'getJob',
      method: 'GET',
      path: '/jobs/{id}',
      summary: 'One job with its state and progress (matched, done, failed, a sample of failures with reasons)',
      lane: 'interactive',
      extension: true,
      params: jobIdParams,
      responses: { 200: { description: 'OK', schema: jobRecord } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.get(params.id, access)),
    }),
    route<{ id: string }>({
      operationId: 'cancelJob',
      method: 'DELETE',
      path: '/jobs/{id}',
      summary:
        'Cancel a QUEUED or RUNNING job: CANCELLED at once; a runner stops after the batch in flight and stamps finishedAt (409 for a job already DONE or FAILED)',
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      params: jobIdParams,
      responses: { 200: { description: 'The job, CANCELLED', schema: jobRecord } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ params, access }) => ok(await svc.cancel(params.id, access)),
    }),
  ];
}
