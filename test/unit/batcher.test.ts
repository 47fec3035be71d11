import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { Batcher, type ItemOutcome } from '../../src/store/batcher.js';
import { itemError } from '../../src/store/item-errors.js';
import { connectionStateOutcomes } from '../../src/resources/endpoints/store.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../src/errors.js';

/** A send function under the test's control: each call waits until released. */
function controlledSend<I, O>(answer: (items: I[]) => ItemOutcome<O>[] | Error) {
  const calls: { items: I[]; release: () => void }[] = [];
  const send = (items: I[]): Promise<ItemOutcome<O>[]> =>
    new Promise((resolve, reject) => {
      calls.push({
        items,
        release: () => {
          const a = answer(items);
          if (a instanceof Error) reject(a);
          else resolve(a);
        },
      });
    });
  return { calls, send };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Batcher (group commit, multi-get)', () => {
  it('sends a lone call at once, alone', async () => {
    const c = controlledSend<number, number>((items) => items.map((i) => ({ ok: true, value: i * 2 })));
    const b = new Batcher(c.send, { maxBatch: 10, maxInFlight: 1 });
    const p = b.submit(21);
    await tick();
    expect(c.calls).to.have.length(1);
    expect(c.calls[0].items).to.deep.equal([21]);
    c.calls[0].release();
    expect(await p).to.equal(42);
  });

  it('carries the calls of one turn together, and the calls made while a request is out in the next one', async () => {
    const c = controlledSend<number, number>((items) => items.map((i) => ({ ok: true, value: i })));
    const b = new Batcher(c.send, { maxBatch: 100, maxInFlight: 1 });
    const first = [1, 2, 3].map((i) => b.submit(i));
    await tick();
    const later = [4, 5].map((i) => b.submit(i));
    await tick();
    expect(c.calls.map((x) => x.items)).to.deep.equal([[1, 2, 3]]);
    expect(b.waiting).to.equal(2);
    c.calls[0].release();
    expect(await Promise.all(first)).to.deep.equal([1, 2, 3]);
    await tick();
    expect(c.calls.map((x) => x.items)).to.deep.equal([[1, 2, 3], [4, 5]]);
    c.calls[1].release();
    expect(await Promise.all(later)).to.deep.equal([4, 5]);
  });

  it('never answers a caller before the request carrying its item has returned', async () => {
    const c = controlledSend<string, string>((items) => items.map((i) => ({ ok: true, value: i })));
    const b = new Batcher(c.send, { maxBatch: 100, maxInFlight: 2 });
    let settled = false;
    const p = b.submit('a').then((v) => {
      settled = true;
      return v;
    });
    for (let i = 0; i < 5; i++) await tick();
    expect(settled).to.equal(false);
    c.calls[0].release();
    expect(await p).to.equal('a');
    expect(settled).to.equal(true);
  });

  it('respects maxBatch and maxInFlight', async () => {
    const c = controlledSend<number, number>((items) => items.map((i) => ({ ok: true, value: i })));
    const b = new Batcher(c.send, { maxBatch: 2, maxInFlight: 2 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => b.submit(i));
    await tick();
    expect(c.calls.map((x) => x.items)).to.deep.equal([
      [1, 2],
      [3, 4],
    ]);
    c.calls[0].release();
    await tick();
    await tick();
    expect(c.calls.map((x) => x.items)).to.deep.equal([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    c.calls[1].release();
    await tick();
    await tick();
    c.calls[2].release();
    await tick();
    await tick();
    c.calls[3].release();
    expect(await Promise.all(all)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect(c.calls.map((x) => x.items.length)).to.deep.equal([2, 2, 2, 1]);
  });

  it('answers each caller with its own item: one item failing fails only its caller', async () => {
    const missing = new NotFoundError('endpoint b not found');
    const c = controlledSend<string, string>((items) =>
      items.map((i) => (i === 'b' ? { ok: false, error: missing } : { ok: true, value: `${i}!` })),
    );
    const b = new Batcher(c.send, { maxBatch: 100, maxInFlight: 1 });
    const results = ['a', 'b', 'c'].map((i) => b.submit(i).then((v) => ({ v }), (e: unknown) => ({ e })));
    await tick();
    expect(c.calls).to.have.length(1);
    c.calls[0].release();
    const [ra, rb, rc] = await Promise.all(results);
    expect(ra).to.deep.equal({ v: 'a!' });
    expect(rb).to.deep.equal({ e: missing });
    expect(rc).to.deep.equal({ v: 'c!' });
  });

  it('fails every caller of a request that fails as a whole, and keeps serving afterwards', async () => {
    let fail = true;
    const down = new ServiceUnavailableError();
    const c = controlledSend<number, number>((items) => (fail ? down : items.map((i) => ({ ok: true, value: i }))));
    const b = new Batcher(c.send, { maxBatch: 100, maxInFlight: 1 });
    const results = [1, 2].map((i) => b.submit(i).catch((e: unknown) => e));
    await tick();
    c.calls[0].release();
    expect(await Promise.all(results)).to.deep.equal([down, down]);
    fail = false;
    const p = b.submit(3);
    await tick();
    c.calls[1].release();
    expect(await p).to.equal(3);
  });

  it('fails the callers when the request answers fewer outcomes than items', async () => {
    const c = controlledSend<number, number>(() => [{ ok: true, value: 1 }]);
    const b = new Batcher(c.send, { maxBatch: 100, maxInFlight: 1 });
    const results = [1, 2].map((i) => b.submit(i).then((v) => v, (e: Error) => e.message));
    await tick();
    c.calls[0].release();
    const [r1, r2] = await Promise.all(results);
    expect(r1).to.equal(1);
    expect(r2).to.match(/1 outcomes for 2 items/);
  });
});

describe('group commit: bulk update items → each caller’s outcome', () => {
  const items = [
    { id: 'ok', partial: { connectionStatus: 'CONNECTED' as const } },
    { id: 'gone', partial: { connectionStatus: 'CONNECTED' as const } },
    { id: 'deleted', partial: { connectionStatus: 'CONNECTED' as const } },
    { id: 'busy', partial: { connectionStatus: 'CONNECTED' as const } },
    { id: 'raced', partial: { connectionStatus: 'CONNECTED' as const } },
    { id: 'odd', partial: { connectionStatus: 'CONNECTED' as const } },
  ];
  const res = {
    errors: true,
    took: 1,
    items: [
      { update: { _index: 'i', _id: 'ok', status: 200, result: 'updated', get: { found: true, _source: { deleted: false } } } },
      { update: { _index: 'i', _id: 'gone', status: 404, error: { type: 'document_missing_exception', reason: '[gone]: document missing' } } },
      { update: { _index: 'i', _id: 'deleted', status: 200, result: 'updated', get: { found: true, _source: { deleted: true } } } },
      { update: { _index: 'i', _id: 'busy', status: 429, error: { type: 'es_rejected_execution_exception', reason: 'rejected' } } },
      { update: { _index: 'i', _id: 'raced', status: 409, error: { type: 'version_conflict_engine_exception', reason: 'conflict' } } },
      { update: { _index: 'i', _id: 'odd', status: 400, error: { type: 'document_parsing_exception', reason: 'bad field' } } },
    ],
  } as unknown as estypes.BulkResponse;

  it('maps each item to the error its own update would have raised', () => {
    const out = connectionStateOutcomes(items, res);
    expect(out[0]).to.deep.equal({ ok: true, value: { deleted: false } });
    expect(out[2]).to.deep.equal({ ok: true, value: { deleted: true } });
    const err = (k: number): unknown => (out[k].ok ? undefined : (out[k] as { error: unknown }).error);
    expect(err(1)).to.be.instanceOf(NotFoundError);
    expect((err(1) as Error).message).to.equal('endpoint gone not found');
    expect(err(3)).to.be.instanceOf(ServiceUnavailableError);
    expect(err(4)).to.be.instanceOf(ConflictError);
    // Anything else stays an Elasticsearch error (a 500 for the caller, as before).
    expect(err(5)).to.not.be.instanceOf(NotFoundError).and.not.be.instanceOf(ServiceUnavailableError);
    expect((err(5) as Error).message).to.match(/document_parsing_exception/);
  });

  it('fails every item when the bulk answers a different number of items', () => {
    const out = connectionStateOutcomes(items.slice(0, 2), res);
    expect(out.every((o) => !o.ok)).to.equal(true);
  });

  it('itemError without a record name leaves a 404 untranslated', () => {
    expect(itemError(404, { type: 'document_missing_exception' })).to.not.be.instanceOf(NotFoundError);
    expect(itemError(404, { type: 'document_missing_exception' }, 'endpoint x not found')).to.be.instanceOf(NotFoundError);
  });
});
