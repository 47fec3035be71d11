/**
 * Retention of a rollover alias (network heartbeats, audit events):
 * documents age out after `retentionDays`. Each maintenance run rolls the alias over once the
 * write generation is a day old (or its primary shard 10 GB), then deletes every other
 * generation whose newest document is older than the retention (an empty one: by its creation
 * date). The write generation is never deleted, so a document is kept at least
 * `retentionDays` and at most about a day longer. One instance at a time does it: the run
 * first takes (or renews) a lease; the others skip.
 */
import type { Logger } from '../log.js';
import type { LeaseStore } from './lease.js';
import type { GenerationalIndex } from './generations.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  retentionDays: number;
  /** Time between runs; the lease lasts three of them, so a dead holder is replaced. */
  intervalMs: number;
  /** This instance's name in the lease. */
  holder: string;
}

export interface RetentionRun {
  /** False when another instance holds the lease (nothing was done). */
  acted: boolean;
  rolledOver: boolean;
  deleted: string[];
}

export class RolloverRetention {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** True once a run of this instance took the lease (released on stop). */
  private held = false;

  constructor(
    private readonly target: GenerationalIndex,
    private readonly lease: LeaseStore,
    private readonly opts: RetentionOptions,
    private readonly log: Logger,
    /** The lease's name (`heartbeat-retention`, `audit-retention`); its log lines say `heartbeat retention`, `audit retention`. */
    private readonly leaseName: string,
  ) {}

  /**
   * One maintenance run at `now`. `forceRollover` rolls over whatever the write generation's
   * age (tests and operators); otherwise the 1-day / 10 GB conditions decide.
   */
  async run(now = new Date(), forceRollover = false): Promise<RetentionRun> {
    if (!(await this.lease.acquire(this.leaseName, this.opts.holder, 3 * this.opts.intervalMs, now))) {
      return { acted: false, rolledOver: false, deleted: [] };
    }
    this.held = true;
    const rolledOver = await this.target.rollover(
      forceRollover ? undefined : { maxAge: '1d', maxPrimaryShardSize: '10gb' },
    );
    const cutoff = now.getTime() - this.opts.retentionDays * DAY_MS;
    const deleted: string[] = [];
    for (const g of await this.target.generations()) {
      if (g.isWriteIndex || (g.newest ?? g.createdAt) >= cutoff) continue;
      await this.target.deleteGeneration(g.index);
      deleted.push(g.index);
    }
    if (rolledOver || deleted.length > 0)
      this.log.info({ rolledOver, deleted, retentionDays: this.opts.retentionDays }, this.leaseName.replace('-', ' '));
    return { acted: true, rolledOver, deleted };
  }

  /** Runs every interval from now on (first after `firstDelayMs`); 0 retention days: never. */
  start(firstDelayMs = 60_000): void {
    if (!this.stopped || this.opts.retentionDays <= 0) return;
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  /**
   * Stops the schedule and gives the lease up if this instance took it. A run in progress is
   * not awaited: closing the store client ends it, and a later run of any instance redoes it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.held) return;
    this.held = false;
    await this.lease.release(this.leaseName, this.opts.holder).catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.run()
        .catch((err: unknown) =>
          this.log.warn(
            { err: { message: (err as Error).message } },
            `${this.leaseName} run failed; retrying next interval`,
          ),
        )
        .finally(() => this.schedule(this.opts.intervalMs));
    }, ms);
    this.timer.unref();
  }
}
