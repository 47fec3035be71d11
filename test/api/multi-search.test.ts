/**
 * A multi-search answer longer than V8's largest ordinary string is parsed search by search
 * (src/store/multi-search.ts): the same answers as the client's whole parse, on the real store,
 * whatever the records hold, and the same failures.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, errors, type estypes } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { createClient } from '../../src/store/client.js';
import { isStoreUnavailable } from '../../src/store/errors.js';
import { multiSearch, SPLIT_ABOVE_BYTES, splitAnswers } from '../../src/store/multi-search.js';

const INDEX = 'multi-search-answers';
/** A record's text holds the bytes the cut looks for, inside a nested array. */
const TRICKY = { notes: [{ a: 1 }, { took: 2, text: '},{"took":3' }] };

function searches(n: number, size: number, filter?: estypes.QueryDslQueryContainer): estypes.MsearchRequestItem[] {
  const query = (k: number): estypes.QueryDslQueryContainer => ({ bool: { filter: [{ range: { n: { gte: k * 7 } } }, ...(filter ? [filter] : [])] } });
  return Array.from({ length: n }, (_, k) => [{}, { query: query(k), size, sort: [{ n: 'asc' }] }]).flat() as estypes.MsearchRequestItem[];
}

/** An answer as the store would send it, of `count` searches of `hits` records each. */
function answerBody(count: number, hits: (k: number) => unknown[]): Buffer {
  const one = (k: number): unknown => ({ took: 1, timed_out: false, hits: { total: { value: 9, relation: 'eq' }, hits: hits(k) }, status: 200 });
  return Buffer.from(JSON.stringify({ took: 4, responses: Array.from({ length: count }, (_, k) => one(k)) }));
}

describe('a long multi-search answer, parsed search by search', function () {
  this.timeout(120_000);
  let raw: Client;
  let client: Client;

  before(async () => {
    const es = await testElasticsearch();
    raw = new Client({ node: es.url });
    client = createClient(es.url, 30_000);
    await raw.indices.delete({ index: INDEX, ignore_unavailable: true });
    const pad = 'x'.repeat(900);
    const operations = Array.from({ length: 400 }, (_, n) => [{ index: { _index: INDEX, _id: `r${n}` } }, { n, pad, ...(n % 50 === 3 ? TRICKY : {}) }]).flat();
    const res = await raw.bulk({ operations, refresh: true });
    expect(res.errors).to.equal(false);
  });

  after(async () => {
    await raw.indices.delete({ index: INDEX, ignore_unavailable: true });
    await raw.close();
    await client.close();
  });

  it('answers what the client answers: past the bound parsed search by search, below it and with a boundary inside a record whole', async () => {
    const plain = { bool: { must_not: { exists: { field: 'notes' } } } };
    const parsed: number[] = [];
    const deserialize = client.serializer.deserialize.bind(client.serializer);
    client.serializer.deserialize = <T>(json: string): T => {
      parsed.push(json.length);
      return deserialize<T>(json);
    };
    for (const [n, size, query, texts] of [
      [12, 40, plain, 12],
      [2, 5, plain, 1],
      [12, 40, undefined, undefined],
    ] as const) {
      const request = { index: INDEX, searches: searches(n, size, query) };
      parsed.length = 0;
      const ours = await multiSearch<unknown>(client, request, n);
      if (texts !== undefined) expect(parsed, `${n} searches of ${size}`).to.have.length(texts);
      expect(Math.max(...parsed)).to.be.below(texts === 12 ? SPLIT_ABOVE_BYTES : Infinity);
      const theirs = await raw.msearch<unknown>(request);
      const strip = (r: estypes.MsearchResponse<unknown>): unknown[] => r.responses.map((x) => ({ ...x, took: 0 }));
      expect(ours.responses).to.have.length(n);
      expect(strip(ours)).to.deep.equal(strip(theirs));
    }
  });

  it('cuts a long answer at its searches, and refuses a cut inside a record', () => {
    const parse = (t: string): unknown => JSON.parse(t);
    const plain = answerBody(20, (k) => Array.from({ length: 40 }, (_, i) => ({ _id: `${k}-${i}`, _source: { pad: 'y'.repeat(200) } })));
    expect(plain.length).to.be.above(SPLIT_ABOVE_BYTES);
    expect(splitAnswers(plain, 20, parse)).to.deep.equal((JSON.parse(plain.toString()) as { responses: unknown[] }).responses);
    // The bytes of a boundary inside a record: the part before them does not parse, so no cut.
    const tricky = answerBody(20, (k) => [{ _id: `${k}`, _source: TRICKY }, { _id: `${k}b`, _source: { pad: 'y'.repeat(9000) } }]);
    expect(tricky.toString()).to.include('},{"took":');
    expect(splitAnswers(tricky, 20, parse)).to.equal(undefined);
    // A count that does not match is no cut either.
    expect(splitAnswers(plain, 21, parse)).to.equal(undefined);
  });

  it('keeps a failed search in its place, and fails as the client fails on a refused request', async () => {
    const failing: estypes.MsearchRequestItem[] = [...searches(10, 40), {}, { query: { range: { n: { gte: 'not a number' } } } }, ...searches(2, 40)];
    const request = { index: INDEX, searches: failing };
    const ours = await multiSearch<unknown>(client, request, 13);
    const theirs = await raw.msearch<unknown>(request);
    expect(ours.responses.map((r) => 'error' in r)).to.deep.equal(theirs.responses.map((r) => 'error' in r));
    expect('error' in ours.responses[10]).to.equal(true);

    // A request the store refuses as a whole (400): the same ResponseError as the client's.
    const refused = { index: INDEX, max_concurrent_searches: 0, searches: searches(1, 1) };
    const caught = await multiSearch(client, refused, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    const expected = await raw.msearch(refused).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(caught).to.be.instanceOf(errors.ResponseError);
    expect((caught as errors.ResponseError).statusCode).to.equal((expected as errors.ResponseError).statusCode);
    expect((caught as errors.ResponseError).body).to.deep.equal((expected as errors.ResponseError).body);
  });

  it('fails as the client fails when the node breaks: an answer cut short, a proxy\'s 502 retried as reads are', async () => {
    let requests = 0;
    const node = http.createServer((req, res) => {
      requests++;
      req.resume();
      if (req.url?.startsWith('/cut/')) {
        res.writeHead(200, { 'content-type': 'application/vnd.elasticsearch+json', 'x-elastic-product': 'Elasticsearch' });
        res.write('{"took":1,"responses":[{"took":1,');
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.writeHead(502, { 'content-type': 'text/html', 'x-elastic-product': 'Elasticsearch' }).end('<html>Bad Gateway</html>');
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const broken = createClient(`http://127.0.0.1:${(node.address() as AddressInfo).port}`, 5_000);
    const failure = (index: string): Promise<unknown> =>
      multiSearch(broken, { index, searches: searches(1, 1) }, 1).then(
        () => undefined,
        (e: unknown) => e,
      );
    try {
      const cut = await failure('cut');
      expect(cut).to.be.instanceOf(errors.ConnectionError);
      expect(isStoreUnavailable(cut), 'a cut answer is the store unavailable (503)').to.equal(true);

      requests = 0;
      const gateway = await failure('gateway');
      expect(gateway).to.be.instanceOf(errors.ResponseError);
      expect((gateway as errors.ResponseError).statusCode).to.equal(502);
      expect((gateway as errors.ResponseError).body).to.equal('<html>Bad Gateway</html>');
      expect(requests, 'the first request and two retries').to.equal(3);
    } finally {
      await broken.close();
      await new Promise<void>((resolve) => node.close(() => resolve()));
    }
  });
});
