import { expect } from 'chai';
import { errors, type Client } from '@elastic/elasticsearch';
import { refreshesSent, visible, withDeferredVisibility } from '../../src/store/visibility.js';
import type { StoreContext } from '../../src/store/client.js';
import { ServiceUnavailableError } from '../../src/errors.js';

interface RefreshCall {
  index: string;
  /** Answers the refresh: shards failed (0 = all refreshed), or an error. */
  finish(outcome?: number | Error): void;
}

/** A client whose index refreshes wait until the test finishes them. */
function fakeStore(policy: StoreContext['refresh'] = 'shared'): { ctx: StoreContext; calls: RefreshCall[] } {
  const calls: RefreshCall[] = [];
  const client = {
    indices: {
      refresh: ({ index }: { index: string }) =>
        new Promise((resolve, reject) => {
          calls.push({
            index,
            finish: (outcome = 0) => (outcome instanceof Error ? reject(outcome) : resolve({ _shards: { total: 1, successful: 1 - outcome, failed: outcome } })),
          });
        }),
    },
  } as unknown as Client;
  return { ctx: { client, prefix: 'p', refresh: policy }, calls };
}

const tick = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** Tracks whether a promise has settled, and how. */
function watch(p: Promise<void>): { settled: () => string | undefined } {
  let state: string | undefined;
  p.then(
    () => (state = 'resolved'),
    (e: unknown) => (state = e instanceof ServiceUnavailableError ? 'unavailable' : `rejected: ${String(e)}`),
  );
  return { settled: () => state };
}

describe('write visibility (shared refresh per index)', () => {
  it('an idle index: one refresh starts at once; the caller is answered when it ends', async () => {
    const { ctx, calls } = fakeStore();
    const w = watch(visible(ctx, 'p-a'));
    await tick();
    expect(calls.map((c) => c.index)).to.deep.equal(['p-a']);
    expect(w.settled()).to.equal(undefined);
    calls[0].finish();
    await tick();
    expect(w.settled()).to.equal('resolved');
  });

  it('callers arriving during a refresh wait for the next one, which starts after it and is shared', async () => {
    const { ctx, calls } = fakeStore();
    const first = watch(visible(ctx, 'p-a'));
    await tick();
    // These writes were acknowledged after the running refresh started: it may not show them.
    const later = Array.from({ length: 10 }, () => watch(visible(ctx, 'p-a')));
    await tick();
    expect(calls).to.have.length(1);
    calls[0].finish();
    await tick();
    expect(first.settled()).to.equal('resolved');
    expect(later.map((w) => w.settled())).to.deep.equal(Array.from({ length: 10 }, () => undefined));
    expect(calls).to.have.length(2);
    // A caller arriving while the second runs waits for a third.
    const third = watch(visible(ctx, 'p-a'));
    calls[1].finish();
    await tick();
    expect(later.map((w) => w.settled())).to.deep.equal(Array.from({ length: 10 }, () => 'resolved'));
    expect(third.settled()).to.equal(undefined);
    expect(calls).to.have.length(3);
    calls[2].finish();
    await tick();
    expect(third.settled()).to.equal('resolved');
    expect(refreshesSent(ctx.client, 'p-a')).to.equal(3);
  });

  it('indices are independent; one call may wait for several', async () => {
    const { ctx, calls } = fakeStore();
    const both = watch(visible(ctx, 'p-a', 'p-b', 'p-a'));
    await tick();
    expect(calls.map((c) => c.index).sort()).to.deep.equal(['p-a', 'p-b']);
    calls[0].finish();
    await tick();
    expect(both.settled()).to.equal(undefined);
    calls[1].finish();
    await tick();
    expect(both.settled()).to.equal('resolved');
  });

  it('a refresh that fails, or leaves a shard unrefreshed, answers 503 to its callers; the next caller refreshes again', async () => {
    const { ctx, calls } = fakeStore();
    const a = watch(visible(ctx, 'p-a'));
    await tick();
    const b = watch(visible(ctx, 'p-a'));
    calls[0].finish(new errors.ConnectionError('down'));
    await tick();
    expect(a.settled()).to.equal('unavailable');
    expect(b.settled()).to.equal(undefined);
    calls[1].finish(1);
    await tick();
    expect(b.settled()).to.equal('unavailable');
    const c = watch(visible(ctx, 'p-a'));
    await tick();
    expect(calls).to.have.length(3);
    calls[2].finish();
    await tick();
    expect(c.settled()).to.equal('resolved');
  });

  it("policy 'none' sends nothing and answers at once", async () => {
    const { ctx, calls } = fakeStore('none');
    const w = watch(visible(ctx, 'p-a'));
    await tick();
    expect(w.settled()).to.equal('resolved');
    expect(calls).to.have.length(0);
  });

  it('a deferred batch: its writes return when acknowledged; it ends after one refresh of each index it wrote', async () => {
    const { ctx, calls } = fakeStore();
    let inside = 0;
    const batch = watch(
      withDeferredVisibility(async () => {
        // Three writes to one index and one to another, each awaiting visibility as a service does.
        await Promise.all([visible(ctx, 'p-a'), visible(ctx, 'p-a'), visible(ctx, 'p-b'), visible(ctx, 'p-a')]);
        inside += 1;
      }),
    );
    await tick();
    expect(inside, 'the writes inside returned without a refresh').to.equal(1);
    expect(calls.map((c) => c.index).sort()).to.deep.equal(['p-a', 'p-b']);
    expect(batch.settled()).to.equal(undefined);
    calls[0].finish();
    await tick();
    expect(batch.settled(), 'one index still refreshing').to.equal(undefined);
    calls[1].finish();
    await tick();
    expect(batch.settled()).to.equal('resolved');
    // Outside the batch the next write waits for its own refresh again.
    const after = watch(visible(ctx, 'p-a'));
    await tick();
    expect(calls).to.have.length(3);
    expect(after.settled()).to.equal(undefined);
  });

  it('a deferred batch that fails still refreshes what it wrote, then fails; a failed refresh fails the batch', async () => {
    const { ctx, calls } = fakeStore();
    const failing = withDeferredVisibility(async () => {
      await visible(ctx, 'p-a');
      throw new Error('action failed');
    });
    const failed = watch(failing);
    await tick();
    expect(calls).to.have.length(1);
    expect(failed.settled()).to.equal(undefined);
    calls[0].finish();
    await tick();
    expect(failed.settled()).to.equal('rejected: Error: action failed');
    const unrefreshed = watch(withDeferredVisibility(() => visible(ctx, 'p-a')));
    await tick();
    calls[1].finish(1);
    await tick();
    expect(unrefreshed.settled()).to.equal('unavailable');
  });
});
