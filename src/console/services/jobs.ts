/** Bulk actions as jobs (POST/GET/DELETE /jobs, extensions). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type Job = Schema<'Job'>;
export type JobPage = Schema<'JobPage'>;
export type JobAction = Schema<'JobAction'>;
export type JobCriteria = Schema<'EndpointCriteria'>;

export type JobDryRun = Schema<'JobDryRun'>;

/**
 * True when the criteria narrow nothing, so a job selects every agent the caller sees: the
 * service then wants `allAgents: true` said explicitly, which the confirmation does.
 */
export function selectsEverything(c: JobCriteria): boolean {
  return c.orgId === undefined && !c.basic?.trim() && !c.connectionStatuses?.length && c.hideInactiveAfterDays === undefined;
}

/** Starts the job the person confirmed (`allAgents` when its criteria narrow nothing). */
export function createJob(action: JobAction, criteria: JobCriteria): Promise<Job> {
  return unwrap(client.POST(`${API}/jobs`, { body: { action, criteria, allAgents: selectsEverything(criteria) } }));
}

/** What the job would act on now, by organization (POST /jobs/dry-run): shown before it starts. */
export function dryRunJob(action: JobAction, criteria: JobCriteria): Promise<JobDryRun> {
  return unwrap(client.POST(`${API}/jobs/dry-run`, { body: { action, criteria, allAgents: selectsEverything(criteria) } }));
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
