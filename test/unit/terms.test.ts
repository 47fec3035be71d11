/** A match on any of a list of values stays within Elasticsearch's limit on one terms query. */
import { expect } from 'chai';
import { anyOf, TERMS_PER_CLAUSE } from '../../src/store/terms.js';

describe('any of a list of values', () => {
  it('is one terms query while the list fits in one', () => {
    expect(anyOf('orgId', ['a', 'b'])).to.deep.equal({ terms: { orgId: ['a', 'b'] } });
    expect(anyOf('orgId', [])).to.deep.equal({ terms: { orgId: [] } });
  });

  it('splits a longer list into clauses below the limit, every value in exactly one, any of which matches', () => {
    const values = Array.from({ length: 2 * TERMS_PER_CLAUSE + 7 }, (_, i) => `org-${i}`);
    const q = anyOf('orgId', values) as { bool: { should: { terms: { orgId: string[] } }[]; minimum_should_match: number } };
    expect(q.bool.minimum_should_match).to.equal(1);
    expect(q.bool.should.map((c) => c.terms.orgId.length)).to.deep.equal([TERMS_PER_CLAUSE, TERMS_PER_CLAUSE, 7]);
    expect(q.bool.should.flatMap((c) => c.terms.orgId)).to.deep.equal(values);
    expect(TERMS_PER_CLAUSE).to.be.at.most(65_536);
  });
});
