/** Bulk actions as jobs (POST/GET/DELETE /jobs, extensions). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type Job = Schema<'Job'>;
export type JobPage = Schema<'JobPage'>;
export type JobAction = Schema<'JobAction'>;
export type JobCriteria = Schema<'EndpointCriteria'>;

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
