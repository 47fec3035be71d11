/** Builds the rollouts resource: its stores, service and background driver. */
import type { BaseDeps } from '../deps.js';
import type { OrgTree } from '../../access/access.js';
import type { AgentScan } from '../endpoints/agent-scan.js';
import type { CommandBatch } from '../commands/batch.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { RolloutAuditSink } from './audit.js';
import { RolloutStore, RolloutTargetStore } from './store.js';
import { RolloutService } from './service.js';
import { RolloutDriver } from './driver.js';
import { RingWork } from './ring-work.js';
import type { PinService } from './pins.js';

/** Endpoints per scan page, bulk and multi-get of a ring's work (one request per thousand endpoints). */
const ROLLOUT_BATCH_SIZE = 1000;

export interface Rollouts {
  service: RolloutService;
  /** Background: drives the rollouts whose lease this instance holds (started and stopped by the server). */
  driver: RolloutDriver;
  /** The ring work's store counters (the bench reads them). */
  work: RingWork;
}

export function createRollouts(
  { config, store, log }: BaseDeps,
  deps: {
    agents: AgentScan;
    commands: CommandBatch;
    orgs: OrgTree & { pathOf(orgId: string): Promise<string[]> };
    pins: PinService;
    audit: RolloutAuditSink;
    feed: ChangeFeedStore;
    holder: string;
  },
): Rollouts {
  const rollouts = new RolloutStore(store);
  // The jobs' batch size, lease and poll: a rollout runs like a job.
  const work = new RingWork(new RolloutTargetStore(store), { agents: deps.agents, commands: deps.commands, orgs: deps.orgs }, ROLLOUT_BATCH_SIZE);
  const driver = new RolloutDriver(
    rollouts,
    work,
    { pins: deps.pins, orgs: deps.orgs, audit: deps.audit },
    { holder: deps.holder, leaseMs: config.jobs.leaseSeconds * 1000, pollMs: config.jobs.pollMs },
    log,
  );
  const service = new RolloutService(rollouts, deps.orgs, deps.audit, async (id) => {
    driver.wake();
    // Other instances' drivers look at once too (their change watchers wake them).
    await deps.feed.append('rollouts', [id]).catch(() => undefined);
  });
  return { service, driver, work };
}
