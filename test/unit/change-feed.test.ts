import { expect } from 'chai';
import { DISCOVERY_MS, DORMANT_MS, FeedPosition, GAP_MS } from '../../src/resources/change-watcher.js';
import { ChangeFeedStore, type FeedEntry, type FeedEntryDoc } from '../../src/store/change-feed.js';
import type { StoreContext } from '../../src/store/client.js';
import { ServiceUnavailableError } from '../../src/errors.js';

const FEEDS = ['tokens', 'organizations'];
const T0 = 1_800_000_000_000;

function entry(writer: string, feed: string, seq: number, ids: string[] = [`${writer}-${feed}-${seq}`], at = T0): FeedEntry {
  return { writer, feed, seq, ids, at };
}

const sorted = (m: Map<string, string[] | undefined>, feed: string): string[] | undefined => m.get(feed)?.slice().sort();

describe('change feed: a reader position', () => {
  it('resumes every writer from its head and delivers only what came after it', () => {
    const p = new FeedPosition(FEEDS, [{ writer: 'a', feed: 'tokens', seq: 3 }], T0);
    const q = p.query(T0 + 1);
    expect(q.follow).to.deep.equal([{ writer: 'a', after: { tokens: 3 } }]);
    const got = p.take([entry('a', 'tokens', 3), entry('a', 'tokens', 4), entry('a', 'tokens', 5)], T0 + 1);
    expect(sorted(got, 'tokens')).to.deep.equal(['a-tokens-4', 'a-tokens-5']);
    expect(p.query(T0 + 2).follow).to.deep.equal([{ writer: 'a', after: { tokens: 5 } }]);
    // The same entries read again (an overlapping read) are not delivered twice.
    expect(p.take([entry('a', 'tokens', 5)], T0 + 3).size).to.equal(0);
  });

  it('merges the ids of several entries and writers once each, per feed', () => {
    const p = new FeedPosition(FEEDS, [], T0);
    const got = p.take(
      [entry('a', 'tokens', 1, ['x', 'y']), entry('b', 'tokens', 1, ['y']), entry('b', 'organizations', 1, ['o1'])],
      T0,
    );
    expect(sorted(got, 'tokens')).to.deep.equal(['x', 'y']);
    expect(sorted(got, 'organizations')).to.deep.equal(['o1']);
  });

  it('finds writers it does not follow among the recent entries of others, excluding its own', () => {
    const p = new FeedPosition(FEEDS, [{ writer: 'a', feed: 'tokens', seq: 1 }], T0);
    const q = p.query(T0 + 10, 'me');
    expect(q.othersSince).to.equal(T0 + 10 - DISCOVERY_MS);
    expect(q.exclude).to.equal('me');
    // A writer started after this reader's heads: its sequence starts at 1.
    const got = p.take([entry('new', 'organizations', 1), entry('new', 'organizations', 2)], T0 + 10);
    expect(sorted(got, 'organizations')).to.deep.equal(['new-organizations-1', 'new-organizations-2']);
    expect(p.query(T0 + 20).follow.map((f) => f.writer)).to.deep.equal(['a', 'new']);
  });

  it('delivers an entry beyond a hole at once, waits for the hole, and does not deliver it twice', () => {
    const p = new FeedPosition(FEEDS, [{ writer: 'a', feed: 'tokens', seq: 1 }], T0);
    const first = p.take([entry('a', 'tokens', 3)], T0);
    expect(first.get('tokens')).to.deep.equal(['a-tokens-3']);
    // Still asked from 1 on, so the missing 2 is found when it becomes searchable.
    expect(p.query(T0 + 1).follow[0]?.after).to.deep.equal({ tokens: 1 });
    const second = p.take([entry('a', 'tokens', 2), entry('a', 'tokens', 3)], T0 + GAP_MS / 2);
    expect(second.get('tokens')).to.deep.equal(['a-tokens-2']);
    expect(p.query(T0 + GAP_MS).follow[0]?.after).to.deep.equal({ tokens: 3 });
  });

  it('reloads a feed (undefined) when a hole stays open longer than GAP_MS, then goes on past it', () => {
    const p = new FeedPosition(FEEDS, [{ writer: 'a', feed: 'tokens', seq: 1 }], T0);
    p.take([entry('a', 'tokens', 3)], T0);
    expect(p.take([entry('a', 'tokens', 3)], T0 + GAP_MS).size, 'not yet').to.equal(0);
    const lost = p.take([entry('a', 'tokens', 3)], T0 + GAP_MS + 1);
    expect(lost.has('tokens')).to.equal(true);
    expect(lost.get('tokens')).to.equal(undefined);
    expect(lost.has('organizations')).to.equal(false);
    const after = p.take([entry('a', 'tokens', 4)], T0 + GAP_MS + 2);
    expect(after.get('tokens')).to.deep.equal(['a-tokens-4']);
  });

  it('a writer first seen in the middle of its sequence (its earlier entries gone) is a hole: reload after GAP_MS', () => {
    const p = new FeedPosition(FEEDS, [], T0);
    expect(p.take([entry('b', 'organizations', 7)], T0).get('organizations')).to.deep.equal(['b-organizations-7']);
    const lost = p.take([], T0 + GAP_MS + 1);
    expect(lost.has('organizations') && lost.get('organizations') === undefined).to.equal(true);
  });

  it('stops following a writer idle for DORMANT_MS, and resumes it where it was when it writes again', () => {
    const p = new FeedPosition(FEEDS, [{ writer: 'a', feed: 'tokens', seq: 4 }], T0);
    expect(p.query(T0 + DORMANT_MS + 1).follow).to.deep.equal([]);
    // Found again among the others; what it wrote before is not delivered again.
    const got = p.take([entry('a', 'tokens', 4), entry('a', 'tokens', 5)], T0 + DORMANT_MS + 2);
    expect(got.get('tokens')).to.deep.equal(['a-tokens-5']);
    expect(p.query(T0 + DORMANT_MS + 3).follow).to.deep.equal([{ writer: 'a', after: { tokens: 5 } }]);
  });

  it('ignores feeds it does not read (a newer release writing a feed this one does not know)', () => {
    const p = new FeedPosition(['tokens'], [], T0);
    expect(p.take([entry('a', 'sessions', 1)], T0).size).to.equal(0);
    expect(p.query(T0).follow).to.deep.equal([]);
  });
});

describe('change feed: the writer and its outbox', () => {
  type Op = { create: { _id: string } } | FeedEntryDoc;
  /** A store whose bulk answers with `answer(call)`: each item's status, or a thrown error. */
  function fakeStore(answer: (call: number, ops: Op[]) => number[] | Error): { feed: ChangeFeedStore; calls: Op[][] } {
    const calls: Op[][] = [];
    const client = {
      bulk: ({ operations }: { operations: Op[] }) => {
        calls.push(operations);
        const a = answer(calls.length, operations);
        if (a instanceof Error) return Promise.reject(a);
        return Promise.resolve({ errors: a.some((s) => s >= 300), items: a.map((status) => ({ create: { status, ...(status >= 300 ? { error: { type: 'cluster_block_exception', reason: 'blocked' } } : {}) } })) });
      },
    };
    return { feed: new ChangeFeedStore({ client, prefix: 't', refresh: 'none' } as unknown as StoreContext, 'w1'), calls };
  }
  const docs = (ops: Op[]): FeedEntryDoc[] => ops.filter((o): o is FeedEntryDoc => 'seq' in o);

  it('the changes of one turn share one entry per feed, numbered in sequence', async () => {
    const { feed, calls } = fakeStore((_, ops) => docs(ops).map(() => 201));
    await Promise.all([feed.append('organizations', ['o1']), feed.append('organizations', ['o2']), feed.append('tokens', ['t1'])]);
    await feed.append('organizations', ['o3']);
    expect(calls.map(docs).map((d) => d.map((x) => [x.feed, x.seq, x.ids]))).to.deep.equal([
      [['organizations', 1, ['o1', 'o2']], ['tokens', 1, ['t1']]],
      [['organizations', 2, ['o3']]],
    ]);
    expect(calls[0]?.[0]).to.deep.equal({ create: { _id: 'w1/organizations/1' } });
  });

  it('a refused entry answers 503 and is sent again, unchanged and before newer ones, until stored', async () => {
    const { feed, calls } = fakeStore((call, ops) => (call === 1 ? new Error('connection refused') : call === 2 ? docs(ops).map(() => 403) : docs(ops).map(() => 201)));
    const first = await feed.append('tokens', ['t1']).then(() => undefined, (e: unknown) => e);
    expect(first).to.be.instanceOf(ServiceUnavailableError);
    expect((first as ServiceUnavailableError).headers?.['Retry-After']).to.equal('1');
    // The retry (after a pause) is refused by the store too; a change made meanwhile waits behind it.
    const second = feed.append('tokens', ['t2']).then(() => 'stored', (e: unknown) => e);
    expect(await second).to.be.instanceOf(ServiceUnavailableError);
    expect(await feed.drain(5000)).to.equal(true);
    expect(feed.pending).to.equal(0);
    const sent = calls.map(docs).map((d) => d.map((x) => `${x.seq}:${x.ids.join(',')}`));
    expect(sent[0]).to.deep.equal(['1:t1']);
    expect(sent[sent.length - 1], 'the older entry first, the same document each time').to.deep.equal(['1:t1', '2:t2']);
    expect(sent.flat().filter((x) => x === '1:t1').length, 't1 sent until stored').to.be.greaterThan(1);
  });
});
