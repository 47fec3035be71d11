/**
 * The signal the admission lanes steer by (src/http/admission.ts): the agents' latency — the
 * handler time of the agent lane's operations, queue time excluded — against its own
 * long-term baseline. docs/adr/0029-lanes-steered-by-agent-latency.md says why this signal.
 *
 * Samples are averaged over short windows (at least WINDOW_MS and MIN_SAMPLES samples, or
 * LONG_WINDOW_MS whatever their number). The baseline is a low percentile of the window
 * averages of the last BASELINE_MS: it follows a lasting change of the agents' own load within
 * that horizon, but not an overload that the lanes below keep pushing back (the good windows
 * between the bad ones hold it down), which a moving average would soon take for normal.
 */

/**
 * A window's verdict: agents' latency above their tolerance, within it, no evidence, or no
 * agents at all (nothing to protect).
 */
export type Verdict = 'congested' | 'clear' | 'unknown' | 'idle';

export const WINDOW_MS = 100;
export const LONG_WINDOW_MS = 1000;
export const MIN_SAMPLES = 8;
export const BASELINE_MS = 60_000;
/** Long windows without any agent, in a row, before the lanes go back to their ceilings. */
export const IDLE_WINDOWS = 3;
/** The baseline is this percentile of the recent window averages. */
const BASELINE_PERCENTILE = 0.1;
/** Windows needed before the baseline is trusted (until then: no verdict but 'clear'). */
const BASELINE_MIN_WINDOWS = 5;

export interface AgentLatencyOptions {
  /** Congested when a window's average exceeds baseline × tolerance + slackMs. */
  tolerance: number;
  /** Absolute slack (ms): at a baseline of a few ms, noise alone would cross a pure ratio. */
  slackMs: number;
}

export const DEFAULT_AGENT_LATENCY: AgentLatencyOptions = { tolerance: 2, slackMs: 5 };

export class AgentLatency {
  private windowStart: number | undefined;
  private sum = 0;
  private samples = 0;
  /** Window averages (ms) and when each window closed, oldest first. */
  private readonly history: { at: number; avg: number }[] = [];
  private emptyWindows = 0;
  /** The last closed window's average and the baseline it was judged against (metrics). */
  lastWindowMs = 0;
  baselineMs = 0;

  constructor(private readonly opts: AgentLatencyOptions = DEFAULT_AGENT_LATENCY) {}

  record(ms: number, now: number): void {
    this.windowStart ??= now;
    this.sum += ms;
    this.samples += 1;
  }

  /**
   * Closes the current window when it is due and judges it; undefined while it is not due.
   * `agentsInFlight`: with no sample in a long window, agents still waiting is no evidence
   * either way, and no agent at all is a clear sky.
   */
  poll(now: number, agentsInFlight: number): Verdict | undefined {
    if (this.windowStart === undefined) {
      // No sample since the last window: judged once per long window.
      this.windowStart = now;
      return undefined;
    }
    const age = now - this.windowStart;
    if (!((age >= WINDOW_MS && this.samples >= MIN_SAMPLES) || age >= LONG_WINDOW_MS)) return undefined;
    const { sum, samples } = this;
    this.windowStart = undefined;
    this.sum = 0;
    this.samples = 0;
    if (samples === 0) {
      if (agentsInFlight > 0) return 'unknown';
      // Agents absent for IDLE_WINDOWS long windows in a row (not a lull: under overload their
      // requests may wait unread in the sockets, invisible here) leave nothing to protect.
      this.emptyWindows += 1;
      return this.emptyWindows >= IDLE_WINDOWS ? 'idle' : 'clear';
    }
    this.emptyWindows = 0;
    const avg = sum / samples;
    this.lastWindowMs = avg;
    while (this.history.length > 0 && now - this.history[0].at > BASELINE_MS) this.history.shift();
    if (samples >= MIN_SAMPLES) this.history.push({ at: now, avg });
    if (this.history.length < BASELINE_MIN_WINDOWS) return 'clear';
    const sorted = this.history.map((h) => h.avg).sort((a, b) => a - b);
    this.baselineMs = sorted[Math.floor(BASELINE_PERCENTILE * (sorted.length - 1))];
    const above = avg > this.baselineMs * this.opts.tolerance + this.opts.slackMs;
    // A few slow samples of a quiet minute are no evidence of congestion.
    if (above && samples < MIN_SAMPLES) return 'unknown';
    return above ? 'congested' : 'clear';
  }
}
