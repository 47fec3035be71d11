/**
 * Write visibility, the store's one mechanism for writes that callers read back through search.
 *
 * A write is acknowledged first (sent with `refresh=false`), then its caller awaits
 * `visible(ctx, index)`: it resolves after a refresh of the index that STARTED after the
 * call, so every write acknowledged before the call is searchable by any client. At most one
 * refresh per index is in flight; callers arriving while one runs wait for the next, which
 * starts as soon as the current one finishes and is shared by all of them — N concurrent
 * writers cost about two refreshes, and an idle service answers in one refresh (milliseconds)
 * instead of waiting for the scheduled one (`refresh=wait_for`, up to a second). A refresh
 * that fails is a store error (503), never a claim that the write is visible.
 *
 * Batch work whose writes become visible together (a bulk-action job's batch, counted only
 * once it is done) runs inside `withDeferredVisibility`: each write in it returns when it is
 * acknowledged, and the batch ends with one shared refresh of every index it wrote, instead of
 * one refresh wait per write (which, with a job's writes in flight, keeps an index refreshing
 * back to back).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@elastic/elasticsearch';
import type { StoreContext } from './client.js';
import { storeCall } from './errors.js';
import { ServiceUnavailableError } from '../errors.js';

/** The refreshes of one index: the one running, and the one that will start after it. */
class IndexRefresher {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  /** Refresh requests sent (for tests and metrics). */
  sent = 0;

  constructor(
    private readonly client: Client,
    private readonly index: string,
  ) {}

  /** Resolves after a refresh that started after this call. */
  visible(): Promise<void> {
    // A next refresh that has not started yet starts after this call: share it.
    if (this.next) return this.next;
    if (!this.running) return this.start();
    // The running refresh may have started before the caller's write was acknowledged.
    this.next = this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.start();
      });
    return this.next;
  }

  private start(): Promise<void> {
    this.sent += 1;
    const p: Promise<void> = storeCall(() => this.client.indices.refresh({ index: this.index }))
      .then((res) => {
        // A shard copy that failed to refresh may not show the write: never claim visibility.
        if ((res._shards?.failed ?? 0) > 0) throw new ServiceUnavailableError();
      })
      .finally(() => {
        if (this.running === p) this.running = undefined;
      });
    this.running = p;
    return p;
  }
}

const byClient = new WeakMap<Client, Map<string, IndexRefresher>>();

function refresherOf(client: Client, index: string): IndexRefresher {
  let indices = byClient.get(client);
  if (!indices) {
    indices = new Map();
    byClient.set(client, indices);
  }
  let r = indices.get(index);
  if (!r) {
    r = new IndexRefresher(client, index);
    indices.set(index, r);
  }
  return r;
}

/**
 * Makes every write to `indices` acknowledged before the call searchable (policy `shared`),
 * or returns at once (policy `none`: tools that publish their writes themselves).
 */
export async function visible(ctx: StoreContext, ...indices: string[]): Promise<void> {
  if (ctx.refresh === 'none') return;
  const deferred = deferral.getStore();
  if (deferred) {
    for (const index of indices) deferred.set(index, ctx.client);
    return;
  }
  await Promise.all([...new Set(indices)].map((index) => refresherOf(ctx.client, index).visible()));
}

/** Inside `withDeferredVisibility`: the indices written so far, and the client each was written through. */
const deferral = new AsyncLocalStorage<Map<string, Client>>();

/**
 * Runs `work` with the visibility of its writes deferred to its end: writes inside it return
 * once acknowledged, and this resolves after one refresh (shared, as above) of every index
 * they wrote, so when it resolves every write of `work` is searchable. The refresh is waited
 * for even when `work` fails (its earlier writes were acknowledged); a failed refresh fails it.
 */
export async function withDeferredVisibility<T>(work: () => Promise<T>): Promise<T> {
  const written = new Map<string, Client>();
  const flush = (): Promise<unknown> => Promise.all([...written].map(([index, client]) => refresherOf(client, index).visible()));
  let out: T;
  try {
    out = await deferral.run(written, work);
  } catch (err) {
    await flush().catch(() => undefined);
    throw err;
  }
  await flush();
  return out;
}

/** Refresh requests this mechanism sent for one index through one client (for tests). */
export function refreshesSent(client: Client, index: string): number {
  return byClient.get(client)?.get(index)?.sent ?? 0;
}
