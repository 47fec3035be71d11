/** Which searches count their total along with their hits up to a bound, and the count asked past it. */
import { expect } from 'chai';
import { boundedPage, COUNTED_WITH_HITS, PageCounts } from '../../src/store/page-total.js';
import type { SearchBody } from '../../src/store/doc-types.js';

const query = { term: { orgPath: 'msp' } };
const page: SearchBody = { query, from: 40, size: 20, sort: [{ id: 'asc' }], track_total_hits: true, seq_no_primary_term: true };

describe('pages counted with their hits up to a bound', () => {
  it('a page that counts exactly counts with its hits up to the bound, and past it counts its query alone', () => {
    const bounded = boundedPage(page);
    expect(bounded?.page).to.deep.equal({ ...page, track_total_hits: COUNTED_WITH_HITS });
    expect(bounded?.count).to.deep.equal({ query, size: 0, track_total_hits: true });
  });

  it('the count keeps the page’s timeout', () => {
    expect(boundedPage({ ...page, timeout: '2s' })?.count).to.deep.equal({ query, size: 0, track_total_hits: true, timeout: '2s' });
  });

  for (const [what, req] of [
    ['a bounded total', { ...page, track_total_hits: 500 }],
    ['no total', { ...page, track_total_hits: false }],
    ['a count alone', { ...page, size: 0 }],
    ['aggregations', { ...page, aggs: { m: { terms: { field: 'model' } } } }],
    ['a post filter', { ...page, post_filter: { term: { os: 'linux' } } }],
    ['collapse', { ...page, collapse: { field: 'orgId' } }],
    ['a minimum score', { ...page, min_score: 1 }],
    ['runtime fields', { ...page, runtime_mappings: { x: { type: 'keyword' } } }],
    ['a point in time', { ...page, pit: { id: 'p' } }],
  ] as [string, SearchBody][]) {
    it(`a search with ${what} stays as it is`, () => {
      expect(boundedPage(req)).to.equal(undefined);
    });
  }
});

describe('the memory of queries counted past the bound', () => {
  it('a query first counts with its hits; once counted past the bound its next pages ask uncounted hits and the count together; below it again, it counts with its hits again', () => {
    const counts = new PageCounts();
    const first = counts.plan(page);
    expect(first).to.include({ together: false });
    expect(first?.hits.track_total_hits).to.equal(COUNTED_WITH_HITS);
    counts.counted(page, 700_000);
    const next = counts.plan({ ...page, from: 0 });
    expect(next).to.include({ together: true });
    expect(next?.hits).to.deep.equal({ ...page, from: 0, track_total_hits: false });
    expect(next?.count).to.deep.equal({ query, size: 0, track_total_hits: true });
    // Another query is not taken for it.
    expect(counts.plan({ ...page, query: { term: { orgPath: 'other' } } })).to.include({ together: false });
    counts.counted({ ...page, from: 0 }, COUNTED_WITH_HITS - 1);
    expect(counts.plan(page)).to.include({ together: false });
  });
});
