/**
 * Heartbeat retention (issue 15): network heartbeats age out after `retentionDays`. The
 * heartbeats alias is a rollover write alias; each maintenance run rolls it over once the
 * write generation is a day old (or its primary shard 10 GB), then deletes every other
 * generation whose newest heartbeat is older than the retention (an empty one: by its
 * creation date). The write generation is never deleted, so a heartbeat is kept at least
 * `retentionDays` and at most about a day longer. One instance at a time does it: the run
 * first takes (or renews) a lease; the others skip.
 */
import type { Logger } from '../../log.js';
import type { LeaseStore } from '../../store/lease.js';
import type { HeartbeatStore } from './heartbeat-store.js';

export const RETENTION_LEASE = 'heartbeat-retention';
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

export class HeartbeatRetention {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** True once a run of this instance took the lease (released on stop). */
  private held = false;

  constructor(
    private readonly heartbeats: HeartbeatStore,
    private readonly lease: LeaseStore,
    private readonly opts: RetentionOptions,
    private readonly log: Logger,
  ) {}

  /**
   * One maintenance run at `now`. `forceRollover` rolls over whatever the write generation's
   * age (tests and operators); otherwise the 1-day / 10 GB conditions decide.
   */
  async run(now = new Date(), forceRollover = false): Promise<RetentionRun> {
    if (!(await this.lease.acquire(RETENTION_LEASE, this.opts.holder, 3 * this.opts.intervalMs, now))) {
      return { acted: false, rolledOver: false, deleted: [] };
    }
    this.held = true;
    const rolledOver = await this.heartbeats.rollover(forceRollover ? undefined : { maxAge: '1d', maxPrimaryShardSize: '10gb' });
    const cutoff = now.getTime() - this.opts.retentionDays * DAY_MS;
    const deleted: string[] = [];
    for (const g of await this.heartbeats.generations()) {
      if (g.isWriteIndex || (g.newest ?? g.createdAt) >= cutoff) continue;
      await this.heartbeats.deleteGeneration(g.index);
      deleted.push(g.index);
    }
    if (rolledOver || deleted.length > 0) this.log.info({ rolledOver, deleted, retentionDays: this.opts.retentionDays }, 'heartbeat retention');
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
    await this.lease.release(RETENTION_LEASE, this.opts.holder).catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.run()
        .catch((err: unknown) => this.log.warn({ err: { message: (err as Error).message } }, 'heartbeat retention run failed; retrying next interval'))
        .finally(() => this.schedule(this.opts.intervalMs));
    }, ms);
    this.timer.unref();
  }
}
