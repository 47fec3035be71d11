/** Bulk actions as jobs: extensions beyond the spec. */
import { READERS, WRITERS } from '../../http/auth.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import type { JobState } from './store.js';
import type { JobService, NewJob } from './service.js';
import { jobIdParams, jobListQuery, jobRecord, newJob, pageJob } from './schema.js';

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'job', sec: true, roles: READERS, errors: [400, 401, 403, 500] });

export function jobRoutes(svc: JobService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, NewJob>({
      operationId: 'createJob',
      method: 'POST',
      path: '/jobs',
      summary:
        'Start a bulk action (send a command, enable or disable a module, assign a license type, soft-delete) on every agent matching EndpointCriteria within the caller\'s subtree; answers 202 with the QUEUED job',
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      idempotent: true,
      body: newJob,
      responses: { 202: { description: 'Accepted: the job, QUEUED', schema: jobRecord } },
      handler: async ({ body, access, createdId }) => ({ status: 202, body: await svc.create(body, access, createdId) }),
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
