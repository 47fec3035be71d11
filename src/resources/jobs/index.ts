/** Builds the jobs resource: its store, service and background runner. */
import os from 'node:os';
import crypto from 'node:crypto';
import type { BaseDeps } from '../deps.js';
import type { OrgTree } from '../../access/access.js';
import type { EndpointService } from '../endpoints/service.js';
import type { CommandService } from '../commands/service.js';
import type { ModuleService } from '../modules/service.js';
import type { LicenseService } from '../licenses/service.js';
import { JobStore } from './store.js';
import { JobService } from './service.js';
import { JobRunner } from './runner.js';
import { LeaseStore } from '../../store/lease.js';
import { RolloverRetention, type RetentionOptions } from '../../store/retention.js';

export interface Jobs {
  service: JobService;
  /** Background: runs the jobs whose lease this instance holds (started and stopped by the server). */
  runner: JobRunner;
  /** Background: deletes jobs finished more than ECS_JOB_RETENTION_DAYS ago, the heartbeats' retention mechanism (started and stopped by the server). */
  retention: RolloverRetention;
}

export const JOB_RETENTION_LEASE = 'job-retention';

export function createJobs(
  { config, store, log }: BaseDeps,
  deps: { endpoints: EndpointService; commands: CommandService; modules: ModuleService; licenses: LicenseService; orgs: OrgTree },
  retentionSchedule: Omit<RetentionOptions, 'retentionDays'>,
): Jobs {
  const jobStore = new JobStore(store);
  const runner = new JobRunner(
    jobStore,
    {
      scan: deps.endpoints.agentScan,
      targets: { commands: deps.commands, modules: deps.modules, licenses: deps.licenses, endpoints: deps.endpoints },
      orgs: deps.orgs,
    },
    {
      holder: `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`,
      ratePerSecond: config.jobs.ratePerSecond,
      batchSize: config.jobs.batchSize,
      leaseMs: config.jobs.leaseSeconds * 1000,
      pollMs: config.jobs.pollMs,
    },
    log,
  );
  const retention = new RolloverRetention(
    { deleteExpired: (cutoff) => jobStore.deleteFinishedBefore(cutoff) },
    new LeaseStore(store),
    { ...retentionSchedule, retentionDays: config.maintenance.jobRetentionDays },
    log,
    JOB_RETENTION_LEASE,
  );
  return { service: new JobService(jobStore, deps.endpoints.agentScan, config.jobs.confirmTypedCount, () => runner.wake()), runner, retention };
}
