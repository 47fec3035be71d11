/**
 * Retention (network heartbeats, audit events, finished jobs):
 * records age out after `retentionDays`. For a rollover alias each maintenance run rolls the
 * alias over once the write generation is as old or as large as its rollover conditions
 * (ECS_HEARTBEAT_ROLLOVER_AGE/_SIZE, ECS_AUDIT_ROLLOVER_AGE/_SIZE; 1 day / 10 GB by default),
 * then deletes every other generation whose newest document is older than the retention (an
 * empty one: by its creation date). The write generation is never deleted, so a document is
 * kept at least `retentionDays` and at most about one rollover age longer. Records that change
 * after they are written (jobs) cannot live in generations: their target deletes the expired
 * records one by one instead. One instance at a time does it: the run first takes (or renews)
 * a lease (ECS_RETENTION_LEASE_SECONDS); the others skip.
 */
import type { Logger } from '../log.js';
import { Periodic } from '../periodic.js';
import type { LeaseStore } from './lease.js';
import type { GenerationalIndex } from './generations.js';

/** Records deleted one by one once expired (records that are updated after they are written). */
export interface ExpiringRecords {
  /** Deletes the records that expired before `cutoff`; their ids. */
  deleteExpired(cutoff: Date): Promise<string[]>;
}

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  retentionDays: number;
  /** Time between runs. */
  intervalMs: number;
  /** How long the lease outlives a run (longer than the interval); unset: three intervals, so a dead holder is replaced. */
  leaseMs?: number;
  /** Rollover conditions of a rollover alias (unset: 1 day, 10 GB). */
  rollover?: { maxAge: string; maxPrimaryShardSize: string };
  /** This instance's name in the lease. */
  holder: string;
}

export interface RetentionRun {
  /** False when another instance holds the lease (nothing was done). */
  acted: boolean;
  rolledOver: boolean;
  /** The generations deleted (a rollover alias) or the records deleted (expiring records). */
  deleted: string[];
}

export class RolloverRetention {
  private readonly periodic: Periodic;
  /** True once a run of this instance took the lease (released on stop). */
  private held = false;

  constructor(
    private readonly target: GenerationalIndex | ExpiringRecords,
    private readonly lease: LeaseStore,
    private readonly opts: RetentionOptions,
    private readonly log: Logger,
    /** The lease's name (`heartbeat-retention`, `audit-retention`); its log lines say `heartbeat retention`, `audit retention`. */
    private readonly leaseName: string,
  ) {
    this.periodic = new Periodic(`${leaseName} run`, opts.intervalMs, () => this.run(), log);
  }

  /**
   * One maintenance run at `now`. `forceRollover` rolls over whatever the write generation's
   * age (tests and operators); otherwise the rollover conditions decide.
   */
  async run(now = new Date(), forceRollover = false): Promise<RetentionRun> {
    const leaseMs = this.opts.leaseMs ?? 3 * this.opts.intervalMs;
    if (!(await this.lease.acquire(this.leaseName, this.opts.holder, leaseMs, now))) {
      return { acted: false, rolledOver: false, deleted: [] };
    }
    this.held = true;
    const cutoff = now.getTime() - this.opts.retentionDays * DAY_MS;
    const { rolledOver, deleted } =
      'deleteExpired' in this.target
        ? { rolledOver: false, deleted: await this.target.deleteExpired(new Date(cutoff)) }
        : await this.pruneGenerations(this.target, cutoff, forceRollover);
    if (rolledOver || deleted.length > 0) {
      const what = 'deleteExpired' in this.target ? { deletedCount: deleted.length } : { deleted };
      this.log.info({ rolledOver, ...what, retentionDays: this.opts.retentionDays }, this.leaseName.replace('-', ' '));
    }
    return { acted: true, rolledOver, deleted };
  }

  private async pruneGenerations(
    target: GenerationalIndex,
    cutoff: number,
    forceRollover: boolean,
  ): Promise<{ rolledOver: boolean; deleted: string[] }> {
    const rolledOver = await target.rollover(
      forceRollover ? undefined : (this.opts.rollover ?? { maxAge: '1d', maxPrimaryShardSize: '10gb' }),
    );
    const deleted: string[] = [];
    for (const g of await target.generations()) {
      if (g.isWriteIndex || (g.newest ?? g.createdAt) >= cutoff) continue;
      await target.deleteGeneration(g.index);
      deleted.push(g.index);
    }
    return { rolledOver, deleted };
  }

  /** Runs every interval from now on (first after `firstDelayMs`); 0 retention days: never. */
  start(firstDelayMs = 60_000): void {
    if (this.opts.retentionDays <= 0) return;
    this.periodic.start(firstDelayMs);
  }

  /**
   * Stops the schedule and gives the lease up if this instance took it. A run in progress is
   * not awaited: closing the store client ends it, and a later run of any instance redoes it.
   */
  async stop(): Promise<void> {
    this.periodic.stop();
    if (!this.held) return;
    this.held = false;
    await this.lease.release(this.leaseName, this.opts.holder).catch(() => undefined);
  }
}
