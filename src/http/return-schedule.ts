/**
 * When a shed check-in should come back (docs/adr/0127-check-ins-booked-a-return.md). Each
 * refused agent is booked the next free return time at the pace the check-in lane admits
 * agents, so a reconnect storm of N agents returns spread over N ÷ that pace instead of
 * returning all at once (and being refused again) or waiting longer than the lane needs.
 * Pure: time is passed in, so its rules are tested alone (test/unit/checkin-lane.test.ts).
 */

/** The pace assumed before any check-in was measured (agents a second): optimistic, so a storm met cold is not spread too long; too fast only costs a second refusal, booked at the measured pace. */
export const ASSUMED_PER_SECOND = 1000;
/** The longest return booked (seconds): beyond it the agents' own backoff takes over. */
export const MAX_RETURN_SECONDS = 120;
/** The soonest return (seconds). */
export const MIN_RETURN_SECONDS = 1;
/** Admissions are counted over this window (ms) to measure the pace. */
const WINDOW_MS = 5000;
const BUCKET_MS = 500;

export class ReturnSchedule {
  /** Check-ins admitted while the lane was full, per bucket of the window, oldest first. */
  private readonly buckets: { at: number; n: number }[] = [];
  /** The next free return time (epoch ms). */
  private nextFree = 0;

  /**
   * A check-in left the lane. Only those that left a full lane (others waiting or refused)
   * measure its pace: an idle lane's admissions say what agents asked, not what it can take.
   */
  admitted(now: number, full: boolean): void {
    this.age(now);
    if (!full) return;
    const start = now - (now % BUCKET_MS);
    const last = this.buckets[this.buckets.length - 1];
    if (last && last.at === start) last.n += 1;
    else this.buckets.push({ at: start, n: 1 });
  }

  /** Agents a second a full lane admitted over the window (the assumed pace before one was measured). */
  pace(now: number): number {
    this.age(now);
    if (this.buckets.length === 0) return ASSUMED_PER_SECOND;
    const n = this.buckets.reduce((s, b) => s + b.n, 0);
    return Math.max(1, (n * 1000) / (this.buckets.length * BUCKET_MS));
  }

  /** Books a refused agent's return: the seconds to advise in Retry-After. */
  book(now: number): number {
    const latest = now + MAX_RETURN_SECONDS * 1000;
    const at = Math.min(latest, Math.max(now + MIN_RETURN_SECONDS * 1000, this.nextFree));
    this.nextFree = at + 1000 / this.pace(now);
    return Math.ceil((at - now) / 1000);
  }

  private age(now: number): void {
    while (this.buckets.length > 0 && this.buckets[0].at <= now - WINDOW_MS) this.buckets.shift();
  }
}
