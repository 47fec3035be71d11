/**
 * The model-based concurrency harness: two instances of the service on one store (the second
 * talks to Elasticsearch through a lossy proxy), callers released in an order fast-check's
 * scheduler picks, the proxy's faults in the same runs, and every history checked against a
 * sequential model (linearize.ts). One base seed per run of the suite (printed; ECS_MODEL_SEED
 * sets it) gives each property its own seed, derived from the base and the property's name; a
 * failure prints both and replays with ECS_MODEL_SEED=<base> ECS_MODEL_PATH=<path> and mocha's
 * --fgrep for the one property. The scheduler fixes the order in which requests are released and
 * the cases (callers, values, faults); the service's own timing stays real.
 *
 * Bounded (the default, in `npm test`): ECS_MODEL_RUNS runs per property (default 5).
 * Soak (`npm run test:soak`, ECS_MODEL_SOAK=true): the same properties for ECS_SOAK_MINUTES in all
 * (default 30), shared evenly, then a summary of runs per property.
 */
import path from 'node:path';
import fc from 'fast-check';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../app.js';
import { testElasticsearch } from '../elasticsearch.js';
import { startLossyProxy, type LossyProxy } from '../lossy-proxy.js';
import type { Api, ApiResponse } from '../http.js';
import { describeHistory, linearize, type Model, type Op } from './linearize.js';
import { retryPause } from '../wait.js';

export interface ModelCluster {
  /** Instance 0 talks to Elasticsearch directly, instance 1 through `proxy`. */
  apps: [TestApp, TestApp];
  proxy: LossyProxy;
}

let cluster: Promise<ModelCluster> | undefined;

/** The two instances every model property shares (started by the first that asks, closed after the run). */
export function modelCluster(): Promise<ModelCluster> {
  cluster ??= (async () => {
    const proxy = await startLossyProxy((await testElasticsearch()).url);
    const a = await startTestApp();
    const b = await startTestApp({}, { elasticsearchUrl: proxy.url });
    return { apps: [a, b], proxy };
  })();
  return cluster;
}

const SOAK = process.env.ECS_MODEL_SOAK === 'true';
const SOAK_MS = Number(process.env.ECS_SOAK_MINUTES ?? 30) * 60_000;
const RUNS = Number(process.env.ECS_MODEL_RUNS ?? 5);
const BASE_SEED = process.env.ECS_MODEL_SEED === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.ECS_MODEL_SEED);
const REPLAY_PATH = process.env.ECS_MODEL_PATH;
/** Prints every history checked (ECS_MODEL_VERBOSE=true), to see what a property exercises. */
const VERBOSE = process.env.ECS_MODEL_VERBOSE === 'true';
const properties: string[] = [];
interface Stats {
  runs: number;
  failures: number;
  seed: number;
  /** Answers by status over every run (a property whose answers never vary proves little). */
  statuses: Record<string, number>;
  /** Store faults that met a request: answers lost, writes sent twice. */
  lost: number;
  sentTwice: number;
}
const summary = new Map<string, Stats>();
/** The stats of the property running now (answers are tallied into them). */
let tally: Stats | undefined;
const soakStarted = Date.now();

console.log(`model properties: base seed ${BASE_SEED} (ECS_MODEL_SEED=${BASE_SEED} replays)${SOAK ? `, soak of ${SOAK_MS / 60_000} minutes over every property` : `, ${RUNS} runs each`}`);

/** The property's own seed: the base seed mixed with its name (FNV-1a). */
function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (BASE_SEED ^ h) | 0;
}

after(async function () {
  this.timeout(60_000);
  if (summary.size > 0) {
    const lines = [...summary].map(
      ([name, s]) =>
        `  ${name}: ${s.runs} runs, ${s.failures} failures (seed ${s.seed}); answers ${Object.entries(s.statuses)
          .sort()
          .map(([k, n]) => `${k}×${n}`)
          .join(' ')}; faults met: ${s.lost} answers lost, ${s.sentTwice} writes sent twice`,
    );
    const failures = [...summary.values()].reduce((n, s) => n + s.failures, 0);
    console.log(`model ${SOAK ? 'soak' : 'runs'}: ${Math.round((Date.now() - soakStarted) / 1000)} s, failures = ${failures}\n${lines.join('\n')}`);
  }
  const c = cluster;
  cluster = undefined;
  if (c) {
    const { apps, proxy } = await c;
    await Promise.all(apps.map((a) => a.close()));
    await proxy.close();
  }
});

/** A fault of the store proxy, armed for the next store request of one run that matches the operation's write. */
export type Fault = 'none' | 'lose-answer' | 'send-twice';
export const faults: fc.Arbitrary<Fault> = fc.constantFrom<Fault>('none', 'lose-answer', 'send-twice');

/**
 * The faults for conditional writes other than command moves: the same three. A write sent twice
 * that meets itself is recognised by its own id in the document (src/store/write-token.ts).
 */
export const conditionalFaults: fc.Arbitrary<Fault> = faults;

const NEVER = /(?!)/;

/** Arms `fault` for the next request matching `re` through the proxy. */
export function arm(proxy: LossyProxy, fault: Fault, re: RegExp): void {
  if (fault === 'lose-answer') proxy.loseAnswerOfNext(re);
  if (fault === 'send-twice') proxy.resendNext(re);
}

function disarm(proxy: LossyProxy): void {
  proxy.loseAnswerOfNext(NEVER);
  proxy.resendNext(NEVER);
}

/**
 * Registers one model property as a mocha test: `body` runs one generated case (throwing on a
 * violation). Bounded: RUNS runs, no shrinking (a run costs real requests). Soak: batches of
 * RUNS runs for its share of ECS_SOAK_MINUTES. ECS_MODEL_PATH is `<batch>:<fast-check path>`.
 */
export function modelProperty<T>(name: string, arb: fc.Arbitrary<T>, body: (c: ModelCluster, s: fc.Scheduler, kase: T) => Promise<void>): void {
  properties.push(name);
  it(name, async function () {
    const budgetMs = SOAK ? SOAK_MS / properties.length : 0;
    this.timeout(SOAK ? budgetMs + 300_000 : 60_000 + RUNS * 30_000);
    const c = await modelCluster();
    const seed = seedOf(name);
    const stats: Stats = { runs: 0, failures: 0, seed, statuses: {}, lost: 0, sentTwice: 0 };
    summary.set(name, stats);
    tally = stats;
    console.log(`    model "${name}": seed ${seed}${REPLAY_PATH ? ` path ${REPLAY_PATH}` : ''}, ${SOAK ? `${Math.round(budgetMs / 1000)} s` : `${RUNS} runs`}`);
    const property = fc.asyncProperty(fc.scheduler(), arb, async (s, kase) => {
      stats.runs++;
      const [lost, sentTwice] = [c.proxy.lost, c.proxy.resent.length];
      try {
        await body(c, s, kase);
      } catch (err) {
        stats.failures++;
        throw err;
      } finally {
        disarm(c.proxy);
        stats.lost += c.proxy.lost - lost;
        stats.sentTwice += c.proxy.resent.length - sentTwice;
      }
    });
    // Batches of RUNS runs, each from its own seed (the property's plus the batch number), until
    // the budget is spent: a run is never abandoned half-way (its requests would land in the next).
    const deadline = Date.now() + budgetMs;
    const replay = REPLAY_PATH?.match(/^(\d+):(.*)$/);
    for (let batch = replay ? Number(replay[1]) : 0; ; batch++) {
      const out = await fc.check(property, {
        seed: (seed + batch) | 0,
        ...(replay ? { path: replay[2] } : {}),
        numRuns: RUNS,
        endOnFailure: true,
      });
      if (out.failed) {
        const at = `${batch}:${out.counterexamplePath ?? ''}`;
        const file = path.relative(process.cwd(), this.test?.file ?? 'test/model');
        const cause = out.errorInstance instanceof Error ? (out.errorInstance.stack ?? out.errorInstance.message) : String(out.errorInstance);
        throw new Error(
          `model "${name}" failed (base seed ${BASE_SEED}, property seed ${out.seed}, path ${at})\n` +
            `replay: ECS_MODEL_SEED=${BASE_SEED} ECS_MODEL_PATH=${at} npx mocha --fgrep ${JSON.stringify(name)} ${file}\n` +
            `case: ${fc.stringify(out.counterexample)}\n${cause}`,
        );
      }
      if (replay || Date.now() >= deadline) break;
    }
  });
}

/** The answer a caller acts on: status and body (a shed request is sent again before). */
export interface Answer {
  status: number;
  body: unknown;
  replayed: boolean;
}

/** A request shed at the door was not run: any client may send it again after Retry-After. */
function shedAtTheDoor(res: ApiResponse): boolean {
  if (res.status !== 429 && res.status !== 503) return false;
  const message = (res.body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /at capacity|too many concurrent/.test(message) && res.headers.get('retry-after') !== null;
}

/**
 * What a repeat must answer again: the status and body of a success; the status, message and
 * exception of an error (its timestamp and request id are the repeat's own).
 */
function outcome(a: Answer): unknown {
  if (a.status < 400) return { status: a.status, body: a.body };
  const { message, exception } = a.body as { message?: unknown; exception?: unknown };
  return { status: a.status, message, exception };
}

/** True for an answer that says the store did not answer: the outcome is unknown. */
export function outcomeUnknown(a: Answer): boolean {
  return a.status === 503;
}

/**
 * One run's history: every request a caller sends goes through `send`, which waits for the
 * scheduler to release it (after the caller's jitter), stamps it on a logical clock, and refuses
 * any 5xx but a 503 (never a 500).
 */
export class History<I> {
  private tick = 0;
  readonly ops: Op<I, Answer>[] = [];

  constructor(private readonly s: fc.Scheduler) {}

  /** Sends once when the scheduler says so; returns the answer (after resending what was shed). */
  async send(label: string, jitterMs: number, request: () => Promise<ApiResponse>): Promise<Answer> {
    // The caller's own spacing before it sends (part of the generated case), released in the scheduler's order.
    await this.s.schedule(retryPause(jitterMs), label);
    for (;;) {
      const res = await request();
      if (shedAtTheDoor(res)) {
        await retryPause(Number(res.headers.get('retry-after')) * 1000);
        continue;
      }
      expect(res.status === 503 || res.status < 500, `${label}: ${res.status} ${res.text}`).to.equal(true);
      if (tally) tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
      return { status: res.status, body: res.body, replayed: res.headers.get('idempotent-replayed') === 'true' };
    }
  }

  /** Sends one operation of the history (a repeat under the same Idempotency-Key is sent through `repeat`). */
  async op(caller: number, input: I, label: string, jitterMs: number, request: () => Promise<ApiResponse>): Promise<Op<I, Answer>> {
    const op: Op<I, Answer> = { caller, input, invokedAt: 0, answeredAt: 0 };
    const answer = await this.send(label, jitterMs, () => {
      op.invokedAt = ++this.tick;
      return request();
    });
    op.answeredAt = ++this.tick;
    op.answer = outcomeUnknown(answer) ? undefined : answer;
    this.ops.push(op);
    return op;
  }

  /**
   * The caller repeats `op` with its Idempotency-Key: a known first outcome must come back as it
   * was (marked replayed); an unknown one becomes the repeat's answer.
   */
  async repeat(op: Op<I, Answer>, label: string, request: () => Promise<ApiResponse>): Promise<void> {
    const again = await this.send(label, 0, request);
    if (op.answer !== undefined) {
      expect(outcome(again), `${label}: a repeat answers the first outcome`).to.deep.equal(outcome(op.answer));
      expect(again.replayed, `${label}: marked replayed`).to.equal(true);
      return;
    }
    op.answeredAt = ++this.tick;
    op.answer = outcomeUnknown(again) ? undefined : again;
  }

  /** Runs the callers to their end under the scheduler. */
  async all(callers: Promise<unknown>[]): Promise<void> {
    await this.s.waitFor(Promise.all(callers));
  }

  /** Asserts one linearization explains every answer and ends in a state `finalOk` accepts; returns its end state. */
  check<S>(model: Model<S, I, Answer>, initial: S, finalOk: (s: S) => boolean, finalSeen: unknown): S {
    const found = linearize(model, initial, this.ops, finalOk);
    if (VERBOSE) console.log(`history:\n${describeHistory(this.ops, (a) => `${a.status}`)}\nfinal: ${JSON.stringify(finalSeen)}`);
    if (!found) {
      const shown = describeHistory(this.ops, (a) => `${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
      throw new Error(`no sequential order of the model explains this history and the final state ${JSON.stringify(finalSeen)}:\n${shown}`);
    }
    return found.state;
  }
}

/** A client of instance `i` with `token` (the system token when omitted). */
export function client(c: ModelCluster, i: number, token?: string): Api {
  const app = c.apps[i % 2];
  return token === undefined ? app.admin : app.world.as(token);
}
