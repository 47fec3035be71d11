/**
 * Admission control: every operation belongs to one lane (declared in its route), and each
 * lane has its own concurrency limit in front of the store, a short bounded queue, and sheds
 * at once beyond it (429 for a caller's own excess, 503 for the service's) with Retry-After.
 *
 * Limits adapt to measured latency (a simplified Netflix concurrency-limits Gradient2): each
 * lane compares a short-term average of its handler time with a long-term one and shrinks
 * when the short term grows beyond `tolerance` × the long term. A lane also shrinks when a
 * lane of higher priority sees its latency grow, so store contention caused by heavy work is
 * paid by heavy work, never by agents. Every lane keeps a floor (`min`) so it is never
 * starved. docs/decisions.md ("Issue 17") says why.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { AppError, ServiceUnavailableError, TooManyRequestsError } from '../errors.js';

/** Lanes in priority order: earlier lanes are protected from the contention of later ones. */
export const LANES = ['agent', 'admin', 'interactive', 'heavy'] as const;
export type Lane = (typeof LANES)[number];

export interface LaneSettings {
  /** Floor: the lane always admits at least this many at once. */
  min: number;
  initial: number;
  max: number;
  /** The longest a request waits in the lane's queue before it is shed. */
  queueMs: number;
}

/**
 * Defaults, sized for the ratios of the work rather than for one machine: the adaptive limit
 * moves between `min` and `max`. Agents' hot paths are short store round trips and queue
 * long (as do people's reads and the rare administrative writes, which should rather wait than fail); heavy work queues barely (a shed answer is worth more than a late one).
 */
export const DEFAULT_LANES: Record<Lane, LaneSettings> = {
  agent: { min: 16, initial: 64, max: 1024, queueMs: 1000 },
  admin: { min: 8, initial: 16, max: 128, queueMs: 1000 },
  interactive: { min: 8, initial: 32, max: 256, queueMs: 1000 },
  heavy: { min: 1, initial: 8, max: 64, queueMs: 25 },
};

export interface AdmissionOptions {
  enabled: boolean;
  /** How a handler's error will be answered (the store's translation, from the app): a 5xx makes the lane back off. Unset: only AppErrors count. */
  translate?: (err: unknown) => unknown;
  /** Fixed limits per lane (min = max = initial), e.g. for a test that fills a lane. */
  fixedLimits?: Partial<Record<Lane, number>>;
  /** Queue waits per lane overriding the defaults. */
  queueMs?: Partial<Record<Lane, number>>;
  registry?: Registry;
  /** The clock handler times are read from (milliseconds); tests drive their own. */
  now?: () => number;
}

/** Gradient2's defaults: short window ~10 samples, long ~500, tolerance 1.5, smoothing 0.2. */
const SHORT_ALPHA = 0.2;
const LONG_ALPHA = 1 / 500;
const TOLERANCE = 1.5;
const SMOOTHING = 0.2;
/** A higher lane's congestion signal counts while it is this fresh. */
const SIGNAL_MS = 1000;
const RETRY_AFTER_SECONDS = 1;
/**
 * A lane's queue holds at most this many requests per slot of its limit, and never fewer than
 * QUEUE_MIN (a burst of one client's concurrent writes must not be shed on an idle service);
 * the lane's wait bounds it in time.
 */
const QUEUE_PER_SLOT = 4;
const QUEUE_MIN = 64;

interface Waiter {
  caller: string | undefined;
  start(): void;
  timer: NodeJS.Timeout;
}

/** One lane's adaptive limit, in-flight count and queue. */
class LaneState {
  limit: number;
  inFlight = 0;
  readonly queue: Waiter[] = [];
  readonly perCaller = new Map<string, number>();
  private shortRtt = 0;
  private longRtt = 0;
  /** The last gradient (< 1 means congested) and when it was measured (-∞: never). */
  gradient = 1;
  gradientAt = -Infinity;

  constructor(
    readonly name: Lane,
    readonly settings: LaneSettings,
    readonly adaptive: boolean,
  ) {
    this.limit = settings.initial;
  }

  get capacity(): number {
    return Math.max(this.settings.min, Math.floor(this.limit));
  }

  /** The caller's requests in this lane (in flight and queued). */
  held(caller: string | undefined): number {
    return caller === undefined ? 0 : (this.perCaller.get(caller) ?? 0);
  }

  hold(caller: string | undefined, delta: number): void {
    if (caller === undefined) return;
    const n = (this.perCaller.get(caller) ?? 0) + delta;
    if (n <= 0) this.perCaller.delete(caller);
    else this.perCaller.set(caller, n);
  }

  /** Records one completed request's handler time; `external` is the worst gradient of the lanes above. */
  sample(rttMs: number, external: number, now: number): void {
    const rtt = Math.max(rttMs, 0.05);
    if (this.longRtt === 0) {
      this.shortRtt = rtt;
      this.longRtt = rtt;
    } else {
      this.shortRtt += SHORT_ALPHA * (rtt - this.shortRtt);
      this.longRtt += LONG_ALPHA * (rtt - this.longRtt);
      // The long term drifted up (a past overload): let it come back down (as Gradient2 does).
      if (this.longRtt / this.shortRtt > 2) this.longRtt *= 0.95;
    }
    this.gradient = Math.max(0.5, Math.min(1, (TOLERANCE * this.longRtt) / this.shortRtt));
    this.gradientAt = now;
    if (!this.adaptive) return;
    const g = Math.min(this.gradient, external);
    // Not using half of the limit and nobody congested: no evidence for a new limit.
    if (this.inFlight < this.limit / 2 && g >= 1) return;
    const next = this.limit * g + (g >= 1 ? Math.sqrt(this.limit) : 0);
    this.setLimit(this.limit * (1 - SMOOTHING) + next * SMOOTHING);
  }

  /** The store failed or timed out: back off multiplicatively. */
  dropped(): void {
    if (this.adaptive) this.setLimit(this.limit * 0.9);
  }

  private setLimit(v: number): void {
    this.limit = Math.max(this.settings.min, Math.min(this.settings.max, v));
  }
}

/** The lanes and the one entry point that runs work inside them. */
export class Admission {
  private readonly lanes: Record<Lane, LaneState>;
  private readonly shedTotal?: Counter<'lane' | 'status'>;
  private readonly now: () => number;

  constructor(private readonly options: AdmissionOptions) {
    this.now = options.now ?? (() => performance.now());
    const lanes = {} as Record<Lane, LaneState>;
    for (const lane of LANES) {
      const fixed = options.fixedLimits?.[lane];
      const base = DEFAULT_LANES[lane];
      const settings: LaneSettings = {
        ...(fixed !== undefined ? { min: fixed, initial: fixed, max: fixed } : base),
        queueMs: options.queueMs?.[lane] ?? base.queueMs,
      };
      lanes[lane] = new LaneState(lane, settings, fixed === undefined);
    }
    this.lanes = lanes;
    const registers = options.registry ? [options.registry] : [];
    if (registers.length === 0) return;
    const gauge = (name: string, help: string, read: (l: LaneState) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['lane'],
        registers,
        collect() {
          for (const l of LANES) this.set({ lane: l }, read(lanes[l]));
        },
      });
    };
    gauge('ecs_admission_in_flight', 'Requests running in each admission lane', (l) => l.inFlight);
    gauge('ecs_admission_queued', 'Requests waiting in each admission lane', (l) => l.queue.length);
    gauge('ecs_admission_limit', 'Current concurrency limit of each admission lane', (l) => l.capacity);
    this.shedTotal = new Counter({
      name: 'ecs_admission_shed_total',
      help: 'Requests shed by each admission lane, by answered status',
      labelNames: ['lane', 'status'],
      registers,
    });
  }

  /** Current state of one lane (tests, diagnostics). */
  lane(lane: Lane): { limit: number; inFlight: number; queued: number } {
    const l = this.lanes[lane];
    return { limit: l.capacity, inFlight: l.inFlight, queued: l.queue.length };
  }

  /**
   * Runs `work` inside `lane`: at once while the lane is below its limit, after a short wait
   * in its queue otherwise, or not at all (429/503 with Retry-After) when the queue is full
   * or the wait expires. `caller` (the token id) decides whose excess a shed request is.
   */
  async run<T>(lane: Lane, caller: string | undefined, work: () => Promise<T>): Promise<T> {
    if (!this.options.enabled) return work();
    const l = this.lanes[lane];
    if (l.inFlight >= l.capacity) await this.wait(l, caller);
    else l.inFlight += 1;
    l.hold(caller, 1);
    const start = this.now();
    let failed = false;
    try {
      return await work();
    } catch (err) {
      // A store error that escaped untranslated counts as what it will be answered as.
      const answered = this.options.translate ? this.options.translate(err) : err;
      failed = answered instanceof AppError && answered.status >= 500;
      throw err;
    } finally {
      l.hold(caller, -1);
      if (failed) l.dropped();
      else l.sample(this.now() - start, this.signalAbove(lane), this.now());
      this.release(l);
    }
  }

  private async wait(l: LaneState, caller: string | undefined): Promise<void> {
    const queueMax = Math.max(QUEUE_MIN, l.capacity * QUEUE_PER_SLOT);
    if (l.queue.length >= queueMax || l.settings.queueMs <= 0) throw this.shed(l, caller);
    l.hold(caller, 1);
    try {
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          caller,
          start: () => {
            clearTimeout(waiter.timer);
            resolve();
          },
          timer: setTimeout(() => {
            const i = l.queue.indexOf(waiter);
            if (i >= 0) l.queue.splice(i, 1);
            reject(this.shed(l, caller));
          }, l.settings.queueMs),
        };
        l.queue.push(waiter);
      });
    } finally {
      l.hold(caller, -1);
    }
  }

  /** Frees a slot; the oldest waiter takes it (the in-flight count carries over). */
  private release(l: LaneState): void {
    l.inFlight -= 1;
    while (l.inFlight < l.capacity && l.queue.length > 0) {
      l.inFlight += 1;
      (l.queue.shift() as Waiter).start();
    }
  }

  /** The worst fresh gradient among the lanes of higher priority. */
  private signalAbove(lane: Lane): number {
    const now = this.now();
    let g = 1;
    for (const other of LANES) {
      if (other === lane) break;
      const o = this.lanes[other];
      if (now - o.gradientAt <= SIGNAL_MS) g = Math.min(g, o.gradient);
    }
    return g;
  }

  /**
   * 429 when the caller holds half the lane or more while the lane is not below its start
   * (its own excess); 503 to anyone else, and to everyone while latency or store failures have
   * shrunk the lane (the service's condition, e.g. a store outage).
   */
  private shed(l: LaneState, caller: string | undefined): AppError {
    const shrunk = l.limit < l.settings.initial;
    const own = !shrunk && caller !== undefined && l.held(caller) >= Math.max(1, Math.ceil(l.capacity / 2));
    this.shedTotal?.inc({ lane: l.name, status: own ? '429' : '503' });
    return own
      ? new TooManyRequestsError(RETRY_AFTER_SECONDS, `too many concurrent ${l.name} requests from this token; retry later`)
      : new ServiceUnavailableError(`the service is at capacity for ${l.name} requests; retry later`, RETRY_AFTER_SECONDS);
  }
}
