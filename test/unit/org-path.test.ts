/**
 * The ancestry helpers of org-scoped records (docs/adr/0085) and the selection of records a move
 * still has to rewrite (docs/adr/0086), evaluated over keyword arrays as Elasticsearch matches them.
 */
import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { orgOf, stripPath, withPath } from '../../src/store/org-path.js';
import { ORG_SCOPED_INDICES } from '../../src/resources/org-scoped.js';
import { movedAway } from '../../src/store/org-path-rewrite.js';
import { loadTemplates } from '../../src/store/indices.js';

type Query = estypes.QueryDslQueryContainer;
type Doc = Record<string, string[]>;

/** term / terms / bool over keyword-array fields, as Elasticsearch matches them (any element). */
function matches(query: Query | undefined, doc: Doc): boolean {
  const q = query ?? {};
  if (q.term) {
    const [field, value] = Object.entries(q.term)[0];
    return (doc[field] ?? []).includes(String(value));
  }
  if (q.terms) {
    const [field, values] = Object.entries(q.terms)[0] as [string, string[]];
    return values.some((v) => (doc[field] ?? []).includes(v));
  }
  if (q.bool) {
    const list = (x: Query | Query[] | undefined): Query[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
    const should = list(q.bool.should);
    const min = Number(q.bool.minimum_should_match ?? (should.length > 0 ? 1 : 0));
    return (
      list(q.bool.filter).every((c) => matches(c, doc)) &&
      list(q.bool.must_not).every((c) => !matches(c, doc)) &&
      should.filter((c) => matches(c, doc)).length >= min
    );
  }
  throw new Error(`unsupported query ${JSON.stringify(q)}`);
}

describe('organization ancestry on records', () => {
  it('is set beside the organization field, nested ones too, without touching the caller’s object, and stripped on read', () => {
    const audit = ORG_SCOPED_INDICES.audit;
    const event = { id: 'e1', target: { type: 'endpoint', orgId: 'site' } };
    const stamped = withPath(event, audit, ['root', 'cust', 'site']);
    expect(stamped).to.deep.equal({ id: 'e1', target: { type: 'endpoint', orgId: 'site', orgPath: ['root', 'cust', 'site'] } });
    expect(event.target).to.not.have.property('orgPath');
    expect(orgOf(stamped, audit)).to.equal('site');
    stripPath(stamped, audit);
    expect((stamped.target as Record<string, unknown>).orgPath).to.equal(undefined);
    expect(JSON.parse(JSON.stringify(stamped))).to.deep.equal(event);
    const endpoints = ORG_SCOPED_INDICES.endpoints;
    const record = withPath({ id: 'a1', orgId: 'site', name: 'n' }, endpoints, ['root', 'site']);
    stripPath(record, endpoints);
    expect(JSON.stringify(record)).to.equal('{"id":"a1","orgId":"site","name":"n"}');
    expect(orgOf({ id: 'x' }, ORG_SCOPED_INDICES.endpoints)).to.equal(undefined);
  });

  it('every org-scoped index maps its ancestry field as a keyword', () => {
    const templates = new Map(loadTemplates().map((t) => [t.name, t.template.mappings]));
    for (const [name, f] of Object.entries(ORG_SCOPED_INDICES)) {
      let props = templates.get(name)?.properties as Record<string, estypes.MappingProperty> | undefined;
      const parts = f.path.split('.');
      for (const p of parts.slice(0, -1)) props = (props?.[p] as { properties?: Record<string, estypes.MappingProperty> })?.properties;
      expect(props?.[parts[parts.length - 1]], `${name}.${f.path}`).to.deep.equal({ type: 'keyword' });
    }
  });
});

describe('records a move still has to rewrite', () => {
  const f = ORG_SCOPED_INDICES.endpoints;
  const rec = (...path: string[]): Doc => ({ orgPath: path });
  const cases: { name: string; from: string[]; to: string[] }[] = [
    { name: 'to a sibling branch', from: ['r', 'a'], to: ['r', 'b'] },
    { name: 'up to the grandparent', from: ['r', 'a'], to: ['r'] },
    { name: 'down below a former sibling', from: ['r'], to: ['r', 'b'] },
    { name: 'to the top (a root)', from: ['r', 'a'], to: [] },
    { name: 'from the top below another root', from: [], to: ['s', 't'] },
  ];
  for (const c of cases) {
    it(`${c.name}: the old place is selected, the new one is not, nor records outside the moved organization`, () => {
      const select = movedAway('m', c.from, c.to)(f);
      expect(matches(select, rec(...c.from, 'm')), 'm itself, old').to.equal(true);
      expect(matches(select, rec(...c.from, 'm', 'site')), 'below m, old').to.equal(true);
      expect(matches(select, rec(...c.to, 'm')), 'm itself, new').to.equal(false);
      expect(matches(select, rec(...c.to, 'm', 'site')), 'below m, new').to.equal(false);
      expect(matches(select, rec(...c.from)), 'the old parent’s own').to.equal(false);
      expect(matches(select, rec('x', 'y')), 'unrelated').to.equal(false);
    });
  }
});
