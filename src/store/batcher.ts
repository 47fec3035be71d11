/**
 * Coalesces concurrent calls into one store request: group commit for hot-path writes (one
 * bulk request), multi-get and multi-search for hot-path reads.
 *
 * Batching is adaptive and adds no timer: a call goes out with the next batch as soon as a
 * request slot is free (at the end of the current turn of the event loop, so that the calls
 * of one I/O poll travel together); while `maxInFlight` requests are out, calls queue and
 * leave together when one returns. An idle service therefore sends each call alone, with no
 * added wait, and a busy one sends few large requests. Each caller's promise settles only
 * after the request carrying its item has returned, with its own item's outcome; a request
 * that fails as a whole fails every call it carried.
 *
 * While tracing is on, each request goes out in a span named `opts.name`: the child of the one
 * call it carries, or linked to each of the calls it carries (src/tracing.ts, inBatchSpan).
 */
import type { SpanContext } from '@opentelemetry/api';
import { currentSpanContext, inBatchSpan } from '../trace-context.js';

/** The outcome of one item of a batch. */
export type ItemOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface BatcherOptions {
  /** Most items in one request. */
  maxBatch: number;
  /** Most requests out at once. */
  maxInFlight: number;
  /** The span of each request, while tracing is on (`group commit endpoints`). */
  name?: string;
}

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
  /** The submitting call's span, while tracing is on. */
  caller: SpanContext | undefined;
}

export class Batcher<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Sends one batch; answers one outcome per item, in order. */
    private readonly send: (items: I[]) => Promise<ItemOutcome<O>[]>,
    private readonly opts: BatcherOptions,
  ) {
    if (opts.maxBatch < 1 || opts.maxInFlight < 1) throw new Error('maxBatch and maxInFlight must be at least 1');
  }

  /** Resolves with the item's own outcome once the request carrying it has returned. */
  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject, caller: currentSpanContext() });
      this.schedule();
    });
  }

  /** Calls waiting for a request slot (for tests and metrics). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
        void this.run(this.queue.splice(0, this.opts.maxBatch));
      }
    });
  }

  private async run(batch: Pending<I, O>[]): Promise<void> {
    this.inFlight += 1;
    try {
      let outcomes: ItemOutcome<O>[];
      try {
        outcomes = await inBatchSpan(
          this.opts.name ?? 'batch',
          batch.map((p) => p.caller),
          { 'endpoint_control.batch.size': batch.length },
          () => this.send(batch.map((p) => p.item)),
        );
      } catch (err) {
        for (const p of batch) p.reject(err);
        return;
      }
      batch.forEach((p, k) => {
        const o = outcomes[k];
        if (!o) p.reject(new Error(`the batched request answered ${outcomes.length} outcomes for ${batch.length} items`));
        else if (o.ok) p.resolve(o.value);
        else p.reject(o.error);
      });
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }
}
