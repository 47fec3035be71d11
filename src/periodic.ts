/**
 * Background work an instance repeats while it runs: the schema check, the change feed's poll,
 * retention, the job runner's poll and the sweep of ended sign-in sessions all run through it.
 */
import type { Logger } from './log.js';

/**
 * One run at a time, the next `everyMs` after the previous one ended: runs never overlap and
 * never pile up behind a slow store. A run that throws is logged (`<what> failed; retrying next
 * interval`) and the schedule goes on.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private current: Promise<void> | undefined;
  private again = false;

  constructor(
    /** What the work is, for the log line of a failed run ("schema check", "job runner poll"). */
    private readonly what: string,
    private readonly everyMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  /** Starts the schedule, the first run after `firstDelayMs` (idempotent). */
  start(firstDelayMs = 0): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Started again before a run from before the stop ended: its end schedules the next one.
    if (this.current) return;
    this.schedule(firstDelayMs);
  }

  /** Runs now, or once more as soon as the run in progress ends. */
  wake(): void {
    if (this.stopped) return;
    if (this.current) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** Stops the schedule: no run starts after this call; one in progress goes on (see `settled`). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Resolves once no run is in progress. */
  async settled(): Promise<void> {
    while (this.current) await this.current;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.run()
        .then(
          () => undefined,
          (err: unknown) =>
            this.log.warn({ err: { message: (err as Error).message } }, `${this.what} failed; retrying next interval`),
        )
        .finally(() => {
          this.current = undefined;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.everyMs);
        });
    }, ms);
    this.timer.unref();
  }
}

/**
 * A background worker that polls on one schedule (the job runner, the rollout driver): started
 * and stopped with the instance's other tasks, woken when work arrives. `stopped` tells the poll
 * in progress to end at its next step; `stop` resolves once that poll has ended.
 */
export abstract class PolledWorker {
  protected stopped = true;
  private readonly periodic: Periodic;

  constructor(what: string, pollMs: number, log: Logger) {
    this.periodic = new Periodic(what, pollMs, () => this.pollOnce(), log);
  }

  /** One poll: the work found now, taken as far as it can go. */
  protected abstract pollOnce(): Promise<void>;

  /** Polls every `pollMs` from now on. */
  start(): void {
    this.stopped = false;
    this.periodic.start();
  }

  /** Looks for work now (it was just created or changed, here or on another instance). */
  wake(): void {
    this.periodic.wake();
  }

  /** Stops polling; the poll in progress ends at its next step and this resolves once it has. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.periodic.stop();
    await this.periodic.settled();
  }

  /** Resolves once no poll is in progress (tests). */
  async idle(): Promise<void> {
    await this.periodic.settled();
  }
}
