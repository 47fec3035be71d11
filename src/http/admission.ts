/**
 * Admission control: every operation belongs to one lane (declared in its route), and each
 * lane has its own concurrency limit in front of the store, a bounded queue, and sheds beyond
 * it (429 for a caller's own excess, 503 for the service's) with Retry-After.
 *
 * Agents first, without costing them anything: the agent lane has no adaptive limit, only a
 * high safety ceiling (its work is short and group-committed: capping its concurrency shrinks
 * the batches and makes each request cost the store more). It is protected from below: the
 * agents' latency is watched against its own baseline (src/http/agent-latency.ts), and while
 * it is above its tolerance the lower lanes' limits shrink multiplicatively (heavy most,
 * administrative writes least); while it is within it they grow back. Within a lane, a full
 * lane's freed slot goes to the waiting caller (token) that holds the fewest, so one SOC user
 * cannot take a whole lane. A queue absorbs a burst (a console issues its overview's requests
 * at once); the heavy lane's queue, once shrunk, does not absorb a standing overload: when it
 * has not drained for STANDING_MS it serves newest first and sheds whatever waited longer than
 * STANDING_WAIT_MS (adaptive LIFO with CoDel's "standing queue" test). docs/adr/0029-lanes-steered-by-agent-latency.md
 * says why.
 */
import { Counter, Gauge } from 'prom-client';
import { AppError, ServiceUnavailableError, TooManyRequestsError } from '../errors.js';
import { LANES, type Lane } from '../lanes.js';
import { ReturnSchedule } from './return-schedule.js';
import { AgentLatency, DEFAULT_AGENT_LATENCY, type Verdict } from './agent-latency.js';
import {
  CALLER_QUEUE_MIN,
  DEFAULT_LANES,
  FAILURE_SQUEEZE,
  GROWTH,
  LaneState,
  QUEUE_MIN,
  QUEUE_PER_SLOT,
  RETRY_AFTER_SECONDS,
  STANDING_WAIT_MS,
  type AdmissionOptions,
  type LaneSettings,
  type Waiter,
} from './admission-lane.js';

export { DEFAULT_LANES, type AdmissionOptions, type LaneSettings } from './admission-lane.js';

export { LANES, type Lane };

/** The 503s the lanes answered: deliberate answers, not failures to warn about. */
const shedAnswers = new WeakSet<object>();

/** Whether `err` is a request a full lane shed as the service's condition (503). */
export function isLaneShed(err: unknown): boolean {
  return typeof err === 'object' && err !== null && shedAnswers.has(err);
}

/** The lanes and the one entry point that runs work inside them. */
export class Admission {
  private readonly lanes: Record<Lane, LaneState>;
  private readonly agents: AgentLatency;
  private readonly shedTotal?: Counter<'lane' | 'status'>;
  private readonly now: () => number;
  /** When shed check-ins come back (return-schedule.ts), and when the last one was shed. */
  private readonly returns = new ReturnSchedule();
  private checkinShedAt = 0;

  constructor(private readonly options: AdmissionOptions) {
    this.now = options.now ?? (() => performance.now());
    this.agents = new AgentLatency(options.agentLatency ?? DEFAULT_AGENT_LATENCY);
    const lanes = {} as Record<Lane, LaneState>;
    for (const lane of LANES) {
      const fixed = options.fixedLimits?.[lane];
      const base = DEFAULT_LANES[lane];
      const max = fixed ?? options.maxLimits?.[lane] ?? base.max;
      const settings: LaneSettings = {
        ...base,
        min: fixed ?? Math.min(base.min, max),
        max,
        queueMs: options.queueMs?.[lane] ?? base.queueMs,
      };
      lanes[lane] = new LaneState(lane, settings, fixed === undefined && settings.squeeze < 1);
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
    const agents = this.agents;
    new Gauge({
      name: 'ecs_admission_agent_latency_ms',
      help: "Agents' latency the lanes steer by: the last window's average and its baseline",
      labelNames: ['stat'],
      registers,
      collect() {
        this.set({ stat: 'window' }, agents.lastWindowMs);
        this.set({ stat: 'baseline' }, agents.baselineMs);
      },
    });
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
   * Runs `work` inside `lane`: at once while the lane is below its limit, after a wait in its
   * queue otherwise, or not at all (429/503 with Retry-After) when the queue will not take it
   * or its wait expires. `caller` (the token id) is whose share the request counts against.
   */
  async run<T>(lane: Lane, caller: string | undefined, work: () => Promise<T>): Promise<T> {
    if (!this.options.enabled) return work();
    const l = this.lanes[lane];
    LaneState.add(l.held, caller, 1);
    try {
      if (l.inFlight < l.capacity && l.queue.length === 0) {
        l.inFlight += 1;
        LaneState.add(l.running, caller, 1);
        l.emptyAt = this.now();
      } else {
        // Resolves once a slot was handed over (counted as running by `drain`).
        await this.wait(l, caller);
      }
    } catch (err) {
      LaneState.add(l.held, caller, -1);
      throw err;
    }
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
      LaneState.add(l.running, caller, -1);
      LaneState.add(l.held, caller, -1);
      const now = this.now();
      if (lane === 'checkin') this.returns.admitted(now, l.queue.length > 0 || now - this.checkinShedAt < 1000);
      if (lane === 'agent') {
        if (!failed) this.agents.record(now - start, now);
      } else if (failed) {
        l.scale(FAILURE_SQUEEZE);
      }
      this.release(l);
      this.steer(now);
    }
  }

  /**
   * True while some lane sheds a standing queue (only lanes whose settings say `shedStanding`
   * ever do): the door (src/http/door.ts) looks at requests only then.
   */
  sheddingAtDoor(): boolean {
    if (!this.options.enabled) return false;
    const now = this.now();
    return LANES.some((lane) => this.lanes[lane].standing(now));
  }

  /**
   * The door's decision for a request of `lane` not yet read: shed at once (503, counted as
   * the lane's other sheds) when the lane's queue stands — it would wait its few milliseconds
   * and be shed anyway — else undefined (the request goes in as any other). The agent and
   * admin lanes never shed a standing queue, so they never meet the door.
   */
  shedAtDoor(lane: Lane): AppError | undefined {
    if (!this.options.enabled) return undefined;
    const l = this.lanes[lane];
    return l.standing(this.now()) ? this.shed(l, undefined) : undefined;
  }

  private wait(l: LaneState, caller: string | undefined): Promise<void> {
    const now = this.now();
    const standing = l.standing(now);
    const standingWait = this.options.standingWaitMs ?? STANDING_WAIT_MS;
    if (standing) this.expire(l, now - standingWait);
    const queueMax = Math.max(QUEUE_MIN, l.capacity * QUEUE_PER_SLOT);
    // A caller's share of the queue leaves room for one more caller than are active now.
    const callerMax = Math.max(CALLER_QUEUE_MIN, Math.ceil(queueMax / (l.held.size + 1)));
    // The request itself is counted in `held` already.
    const queuedByCaller = LaneState.count(l.held, caller) - LaneState.count(l.running, caller) - 1;
    const waitMs = standing ? Math.min(standingWait, l.settings.queueMs) : l.settings.queueMs;
    if (waitMs <= 0 || l.queue.length >= queueMax || queuedByCaller >= callerMax) {
      return Promise.reject(this.shed(l, caller));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        caller,
        enqueuedAt: now,
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        shed: (err) => {
          clearTimeout(waiter.timer);
          reject(err);
        },
        timer: setTimeout(() => {
          const i = l.queue.indexOf(waiter);
          if (i >= 0) l.queue.splice(i, 1);
          reject(this.shed(l, caller));
        }, waitMs),
      };
      l.queue.push(waiter);
    });
  }

  /** Sheds the waiters queued before `before` (a standing queue keeps only fresh requests). */
  private expire(l: LaneState, before: number): void {
    while (l.queue.length > 0 && l.queue[0].enqueuedAt < before) {
      const w = l.queue.shift() as Waiter;
      w.shed(this.shed(l, w.caller));
    }
  }

  /** Frees a slot and hands free slots to waiters. */
  private release(l: LaneState): void {
    l.inFlight -= 1;
    this.drain(l, this.now());
  }

  /**
   * Hands free slots to waiters: the one whose caller runs the fewest in this lane; among
   * equals the oldest while the queue absorbs a burst, the newest once it stands.
   */
  private drain(l: LaneState, now: number): void {
    if (l.queue.length === 0) return;
    const lifo = l.standing(now);
    while (l.inFlight < l.capacity && l.queue.length > 0) {
      let best = lifo ? l.queue.length - 1 : 0;
      let fewest = LaneState.count(l.running, l.queue[best].caller);
      for (let k = 1; k < l.queue.length && fewest > 0; k++) {
        const i = lifo ? l.queue.length - 1 - k : k;
        const n = LaneState.count(l.running, l.queue[i].caller);
        if (n < fewest) {
          best = i;
          fewest = n;
        }
      }
      const [w] = l.queue.splice(best, 1);
      l.inFlight += 1;
      LaneState.add(l.running, w.caller, 1);
      w.start();
    }
    if (l.queue.length === 0) l.emptyAt = now;
  }

  /** Once per window of the agents' latency: shrink the lower lanes while agents suffer, grow them back after. */
  private steer(now: number): void {
    const verdict: Verdict | undefined = this.agents.poll(now, this.lanes.agent.inFlight);
    if (verdict === undefined || verdict === 'unknown') return;
    for (const lane of LANES) {
      const l = this.lanes[lane];
      if (verdict === 'congested') l.scale(l.settings.squeeze);
      else {
        // No agent for a long window: nothing to protect, every lane back to its ceiling.
        if (verdict === 'idle') l.scale(1, Infinity);
        else l.scale(GROWTH, 1);
        // A lane that grew may take waiters at once.
        this.drain(l, now);
      }
    }
  }

  /**
   * 429 when the caller holds at least its share of the lane (the limit over the callers
   * active in it) while the lane is at its ceiling: its own excess. 503 to anyone else, and to
   * everyone while the lane is shrunk (for the agents, or by store failures): the service's.
   */
  private shed(l: LaneState, caller: string | undefined): AppError {
    const share = Math.max(1, Math.ceil(l.capacity / Math.max(1, l.held.size)));
    // `held` counts the shed request itself: what the caller holds besides it.
    const own = !l.squeezed && caller !== undefined && LaneState.count(l.held, caller) - 1 >= share;
    this.shedTotal?.inc({ lane: l.name, status: own ? '429' : '503' });
    // A shed check-in is booked its return at the lane's pace (docs/adr/0127); other lanes advise a fixed second.
    let retryAfter = RETRY_AFTER_SECONDS;
    if (l.name === 'checkin') {
      this.checkinShedAt = this.now();
      retryAfter = this.returns.book(this.checkinShedAt);
    }
    const err = own
      ? new TooManyRequestsError(retryAfter, `too many concurrent ${l.name} requests from this token; retry later`)
      : new ServiceUnavailableError(`the service is at capacity for ${l.name} requests; retry later`, retryAfter);
    if (!own) shedAnswers.add(err);
    return err;
  }
}
