/** Bulk actions as jobs (POST/GET/DELETE /jobs, extensions). */
import { API, client, unwrap } from './client';
import type { Body, Ok } from './types';

export type Job = Ok<'getJob'>;
export type JobPage = Ok<'listJobs'>;
export type JobAction = Body<'createJob'>['action'];
export type JobCriteria = NonNullable<Body<'createJob'>['criteria']>;

export function createJob(action: JobAction, criteria: JobCriteria): Promise<Job> {
  return unwrap(client.POST(`${API}/jobs`, { body: { action, criteria } }));
}

/** How many agents the criteria match now (the page search's totalCount): what a job would act on. */
export async function countAgents(criteria: JobCriteria): Promise<number> {
  const page = await unwrap(client.POST(`${API}/endpoint/page-search`, { body: { criteria, pageRequest: { page: 0, size: 1 } } }));
  return page.totalCount ?? 0;
}

export function listJobs(page = 0, size = 20): Promise<JobPage> {
  return unwrap(client.GET(`${API}/jobs`, { params: { query: { page, size } } }));
}

export function getJob(id: string): Promise<Job> {
  return unwrap(client.GET(`${API}/jobs/{id}`, { params: { path: { id } } }));
}

export function cancelJob(id: string): Promise<Job> {
  return unwrap(client.DELETE(`${API}/jobs/{id}`, { params: { path: { id } } }));
}

/**
 * The agents table's current criteria, handed to the Jobs page ("create a job from these
 * criteria"); kept in memory only (it may name hosts, so not in the URL).
 */
let agentCriteria: JobCriteria | undefined;
export function setAgentCriteria(c: JobCriteria): void {
  agentCriteria = c;
}
export function getAgentCriteria(): JobCriteria | undefined {
  return agentCriteria;
}
