import { expect } from 'chai';
import { changedSince } from '../../src/resources/change-watcher.js';
import { MAX_RECENT, type FeedEntry } from '../../src/store/change-feed.js';

const entries = (from: number, to: number): FeedEntry[] => Array.from({ length: to - from + 1 }, (_, i) => ({ id: `t${from + i}`, rev: from + i }));

describe('change feed: what a poller must drop', () => {
  it('the ids changed after the revision it saw, once each', () => {
    const recent = [...entries(1, 3), { id: 't2', rev: 4 }];
    expect(changedSince({ rev: 4, recent }, 1)).to.deep.equal(['t2', 't3']);
    expect(changedSince({ rev: 4, recent }, 4)).to.deep.equal([]);
  });

  it('everything (undefined) when the kept entries no longer reach back to the revision it saw', () => {
    const full = entries(101, 100 + MAX_RECENT);
    expect(changedSince({ rev: 100 + MAX_RECENT, recent: full }, 99)).to.equal(undefined);
    expect(changedSince({ rev: 100 + MAX_RECENT, recent: full }, 101)).to.have.length(MAX_RECENT - 1);
  });
});
