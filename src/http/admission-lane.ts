/** One admission lane (./admission.ts): its settings and defaults, its limit, in-flight count and queue. */
import type { Registry } from 'prom-client';
import type { AppError } from '../errors.js';
import type { Lane } from '../lanes.js';
import type { AgentLatencyOptions } from './agent-latency.js';

export interface LaneSettings {
  /** Floor: the lane always admits at least this many at once. */
  min: number;
  /** Ceiling, and the limit a lane starts at (and returns to while agents are well). */
  max: number;
  /** The longest a request waits in the lane's queue while the queue absorbs a burst. */
  queueMs: number;
  /** Factor applied to the limit for each window in which agents are congested (1: never shrinks). */
  squeeze: number;
  /**
   * Whether a standing queue sheds fast (newest first, short waits). Only while the lane is
   * shrunk for the agents (or has a fixed limit): at its ceiling a queue is a burst to absorb.
   */
  shedStanding: boolean;
}

/**
 * Defaults. The agent lane's limit is only a safety ceiling. The other lanes start at their
 * ceiling — on a quiet day they behave as if there were no lanes — and shrink towards their
 * floor only while the agents' latency says they must; heavy work first and hardest.
 */
export const DEFAULT_LANES: Record<Lane, LaneSettings> = {
  agent: { min: 4096, max: 4096, queueMs: 1000, squeeze: 1, shedStanding: false },
  // Agents taking up their channel (src/resources/agent-channel): only the check-in's store read
  // runs in the lane, never the wait; a reconnect storm queues here and is shed with a spread Retry-After.
  checkin: { min: 256, max: 256, queueMs: 2000, squeeze: 1, shedStanding: false },
  // Agents' bulk reports (a full software inventory, a batch of discovered hosts): a report holds
  // hundreds of kilobytes until its bulk write is visible, so a bounded number run at once, which
  // bounds the heap and the major collections their promoted objects cost; the ones waiting are
  // not read yet (docs/adr/0148-agents-bulk-reports-in-a-lane-of-their-own.md).
  report: { min: 32, max: 32, queueMs: 2000, squeeze: 1, shedStanding: false },
  admin: { min: 1, max: 128, queueMs: 1000, squeeze: 0.9, shedStanding: false },
  interactive: { min: 1, max: 256, queueMs: 1000, squeeze: 0.7, shedStanding: true },
  heavy: { min: 1, max: 64, queueMs: 500, squeeze: 0.5, shedStanding: true },
};

export interface AdmissionOptions {
  enabled: boolean;
  /** How a handler's error will be answered (the store's translation, from the app): a 5xx makes the lane back off. Unset: only AppErrors count. */
  translate?: (err: unknown) => unknown;
  /** Fixed limits per lane (min = max), e.g. for a test that fills a lane. */
  fixedLimits?: Partial<Record<Lane, number>>;
  /** Ceilings per lane overriding the defaults (the agent lane's safety ceiling included). */
  maxLimits?: Partial<Record<Lane, number>>;
  /** Queue waits per lane overriding the defaults. */
  queueMs?: Partial<Record<Lane, number>>;
  agentLatency?: AgentLatencyOptions;
  registry?: Registry;
  /** The longest wait in a standing queue (default STANDING_WAIT_MS; tests lengthen it). */
  standingWaitMs?: number;
  /** The clock handler times are read from (milliseconds); tests drive their own. */
  now?: () => number;
}

/** Growth per window while agents are well: ×GROWTH + 1, so a floor of 1 is back at 64 in ~1.5 s of windows. */
export const GROWTH = 1.25;
/** A store failure (5xx) of a lower lane's request: that lane backs off by this factor. */
export const FAILURE_SQUEEZE = 0.9;
export const RETRY_AFTER_SECONDS = 1;
/** A queue not empty for this long is standing, not a burst (CoDel's interval). */
export const STANDING_MS = 100;
/** In a standing queue a request waits at most this long (then it is shed, well within 50 ms). */
export const STANDING_WAIT_MS = 10;
/** A lane's queue holds at most this many requests per slot of its limit, and never fewer than QUEUE_MIN. */
export const QUEUE_PER_SLOT = 4;
export const QUEUE_MIN = 128;
/** One caller may queue at least this many in a lane (a console's burst), more while few are active. */
export const CALLER_QUEUE_MIN = 64;

export interface Waiter {
  caller: string | undefined;
  enqueuedAt: number;
  start(): void;
  shed(err: AppError): void;
  timer: NodeJS.Timeout;
}

/** One lane's limit, in-flight count and queue. */
export class LaneState {
  limit: number;
  inFlight = 0;
  readonly queue: Waiter[] = [];
  /** Per caller: requests running, and requests running or queued. */
  readonly running = new Map<string, number>();
  readonly held = new Map<string, number>();
  /**
   * When the lane last kept up: a request admitted without waiting, or the queue drained by
   * serving it (a queue emptied by shedding still stands).
   */
  emptyAt = 0;

  constructor(
    readonly name: Lane,
    readonly settings: LaneSettings,
    readonly adaptive: boolean,
  ) {
    this.limit = settings.max;
  }

  get capacity(): number {
    return Math.max(this.settings.min, Math.floor(this.limit));
  }

  /** Shrunk by the controller or by store failures: a shed request is then the service's condition. */
  get squeezed(): boolean {
    return this.capacity < this.settings.max;
  }

  static count(m: Map<string, number>, caller: string | undefined): number {
    return caller === undefined ? 0 : (m.get(caller) ?? 0);
  }

  static add(m: Map<string, number>, caller: string | undefined, delta: number): void {
    if (caller === undefined) return;
    const n = (m.get(caller) ?? 0) + delta;
    if (n <= 0) m.delete(caller);
    else m.set(caller, n);
  }

  standing(now: number): boolean {
    return this.settings.shedStanding && (this.squeezed || !this.adaptive) && this.queue.length > 0 && now - this.emptyAt > STANDING_MS;
  }

  scale(factor: number, plus = 0): void {
    if (!this.adaptive) return;
    this.limit = Math.max(this.settings.min, Math.min(this.settings.max, this.limit * factor + plus));
  }
}
