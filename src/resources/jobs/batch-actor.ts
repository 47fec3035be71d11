/**
 * Acts on one batch of a job's agents (./runner.ts): one endpoint started every
 * 1/`ratePerSecond` s, at most `concurrency` in flight; a store failure cuts the batch short
 * for a retry, an endpoint's own refusal is its outcome.
 */
import type { Access } from '../../access/access.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ScannedAgent } from '../endpoints/agent-scan.js';
import { actOn, type JobTargets } from './actions.js';
import type { JobDoc, JobFailure } from './store.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A store or unexpected failure: not the endpoint's outcome, the batch is retried later. */
export function isTransient(err: unknown): boolean {
  return !(err instanceof AppError) || err.status >= 500;
}

/** What became of a batch: every agent acted on, or cut short (the runner stopped, or store trouble). */
export type BatchOutcome = { kind: 'complete'; done: number; failures: JobFailure[] } | { kind: 'stopped' | 'retry'; acted: number };

export class BatchActor {
  private nextSlot = 0;

  constructor(
    private readonly targets: JobTargets,
    private readonly ratePerSecond: number,
    private readonly concurrency: number,
    /** True once the runner is stopping: no action starts after that. */
    private readonly stopped: () => boolean,
    private readonly log: Logger,
  ) {}

  /** Waits for the next rate slot: one endpoint per 1/ratePerSecond s. */
  private async pace(): Promise<void> {
    const now = performance.now();
    const at = Math.max(this.nextSlot, now);
    this.nextSlot = at + 1000 / this.ratePerSecond;
    if (at - now >= 1) await sleep(at - now);
  }

  /** Acts on every agent of a batch, paced, at most `concurrency` at once. */
  async actOnBatch(
    d: JobDoc,
    batch: ScannedAgent[],
    access: Access,
  ): Promise<BatchOutcome> {
    let done = 0;
    let acted = 0;
    let transient: unknown;
    const failures: JobFailure[] = [];
    const inFlight = new Set<Promise<void>>();
    let cut = false;
    for (const agent of batch) {
      await this.pace();
      if (this.stopped() || transient !== undefined) {
        cut = true;
        break;
      }
      while (inFlight.size >= this.concurrency) await Promise.race(inFlight);
      const p: Promise<void> = actOn(this.targets, d.id, d.action, agent.id, access)
        .then(
          () => {
            done++;
          },
          (err: unknown) => {
            if (isTransient(err)) transient ??= err;
            else failures.push({ endpointId: agent.id, status: (err as AppError).status, reason: (err as AppError).message });
          },
        )
        .finally(() => {
          acted++;
          inFlight.delete(p);
        });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    if (transient !== undefined) {
      this.log.warn({ job: d.id, err: { message: (transient as Error).message } }, 'job batch met a store error');
      return { kind: 'retry', acted };
    }
    // Stopped meanwhile: like a crash at this point, the batch is left for the next runner to replay.
    if (cut || this.stopped()) return { kind: 'stopped', acted };
    // Failures in scan order, so the sample is the first ones whichever finished first.
    const order = new Map(batch.map((a, i) => [a.id, i]));
    failures.sort((a, b) => (order.get(a.endpointId) ?? 0) - (order.get(b.endpointId) ?? 0));
    return { kind: 'complete', done, failures };
  }
}
