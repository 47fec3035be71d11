/**
 * Resource limits (OWASP API4): body size, page size, array sizes, aggregation buckets, the
 * request time-out, slow clients, and the optional per-token rate limit.
 *
 * Limits proved elsewhere: the configured body limit (test/api/foundation.test.ts, 2 kB →
 * 413), discovered hosts beyond 1,000 (test/api/network.test.ts → 413), an inventory beyond
 * 10,000 distinct entries (test/api/software-inventory.test.ts → 413), the page window of
 * 10,000 results (test/api/endpoints.test.ts).
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, useOrg } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { P } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { MAX_AGGREGATION_BUCKETS } from '../../src/http/limits.js';
import { agentDoc, createEndpointDocs } from '../helpers/endpoint-store.js';

type Json = Record<string, unknown>;

/** Arrays a request body may hold beyond their `maxItems` in the document: bounded in code, 413 beyond (tests named above). */
const BOUNDED_IN_CODE = new Set(['POST /endpoint/{id}/software-inventory body', 'POST /network-host/discovered body']);

/** Request-body arrays without maxItems in the served document (`METHOD /path where`). */
function unboundedArrays(doc: Json): string[] {
  const components = ((doc.components as Json).schemas ?? {}) as Record<string, Json>;
  const out: string[] = [];
  const walk = (s: Json | undefined, where: string, seen: Set<Json>): void => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (typeof s.$ref === 'string') return walk(components[s.$ref.split('/').pop() as string], where, seen);
    const isArray = s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array') && s.items !== undefined);
    if (isArray) {
      if (s.maxItems === undefined) out.push(where);
      walk(s.items as Json, `${where}[]`, seen);
    }
    for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) walk(v, `${where}.${k}`, seen);
    for (const alt of [...((s.anyOf ?? []) as Json[]), ...((s.oneOf ?? []) as Json[]), ...((s.allOf ?? []) as Json[])]) walk(alt, where, seen);
  };
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const content = (op.requestBody as Json | undefined)?.content as Record<string, { schema: Json }> | undefined;
      if (content) walk(Object.values(content)[0].schema, `${method.toUpperCase()} ${path.slice(P.length)} body`, new Set());
    }
  }
  return out;
}

/**
 * A proxy to the run's Elasticsearch that holds every request for `delayMs` while armed: a
 * store that answers too slowly, without touching the shared node.
 */
async function slowStore(target: string): Promise<{ url: string; delayMs: number; close(): Promise<void> }> {
  const state = { delayMs: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        // A connection per request: a kept-alive one that Elasticsearch closed would fail the service's call.
        const up = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers, agent: false }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(chunks));
      }, state.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Opens a raw connection and sends `head`, then `drip()` every 200 ms; resolves with what the server answered once it closes the socket. */
function dribble(url: string, head: string, drip: () => string, giveUpMs: number): Promise<{ closed: boolean; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(head));
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(drip());
    }, 200);
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    function finish(closed: boolean): void {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closed, answer });
    }
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
  });
}

describe('limits', () => {
  const o = useOrg();
  let endpointId: string;
  before(async () => {
    endpointId = (await o.t.world.endpoint(o.org)).id;
  });

  it('a client that closes its connection mid-body is counted as 499, neither as a 400 nor as a failure of the service', async function () {
    this.timeout(30_000);
    // One sample line of the exposition: `http_requests_total{method="POST",route="…",status="499"} 3`.
    const countOf = (text: string, status: number): number => {
      const label = `http_requests_total{method="POST",route="${P}/endpoint/:id/software-inventory",status="${status}"} `;
      const line = text.split('\n').find((l) => l.startsWith(label));
      return line === undefined ? 0 : Number(line.slice(label.length));
    };
    const metrics = async (): Promise<string> => (await o.t.anon.get('/metrics')).text;
    const before = await metrics();
    const { hostname, port } = new URL(o.t.url);
    const head =
      `POST ${P}/endpoint/${endpointId}/software-inventory HTTP/1.1\r\nHost: x\r\nx-auth-token: ${String(o.t.admin.token)}\r\n` +
      'content-type: application/json\r\ncontent-length: 100000\r\n\r\n[{"name":"7-Zip","version":"23';
    // The connection ends at different moments of the request: before the service reads the body
    // (while it authenticates and admits), and while it reads it.
    const moments: (number | 'at once' | 'next turn')[] = ['at once', 'next turn', 0, 1, 2, 5, 10, 20, 50];
    await Promise.all(
      moments.map(
        (moment) =>
          new Promise<void>((resolve) => {
            // Each moment counts from the head handed to the kernel, so the service always receives the request.
            const socket = net.connect(Number(port), hostname, () =>
              socket.write(head, () => {
                if (moment === 'at once') socket.destroy();
                else if (moment === 'next turn') setImmediate(() => socket.destroy());
                else setTimeout(() => socket.destroy(), moment);
              }),
            );
            socket.on('close', () => resolve());
            socket.on('error', () => undefined);
          }),
      ),
    );
    const counted = await until('the aborted requests counted', async () => {
      const text = await metrics();
      return countOf(text, 499) - countOf(before, 499) === moments.length ? text : undefined;
    }, 20_000);
    for (const status of [400, 500]) expect(countOf(counted.value, status), `status ${status}`).to.equal(countOf(before, status));
  });

  it('a body over the default 1 MB limit → 413 with the section-7 body', async () => {
    const res = await o.t.admin.post('/endpoint/page-search', { criteria: { basic: 'x'.repeat(1_100_000) } });
    expectErrorBody(res, 413, `${P}/endpoint/page-search`);
  });

  it('every page-search refuses a page size over 1000 (400) and serves 1000', async function () {
    this.timeout(60_000);
    const fill = (path: string): string => path.replace('/org/{id}/', `/org/${o.org}/`).replace('/endpoint/{id}/', `/endpoint/${endpointId}/`);
    const paged = o.t.server.handle.routes.filter((r) => r.body && JSON.stringify(r.body.describe()).includes('"pageRequest"'));
    expect(paged.length).to.be.greaterThanOrEqual(7);
    for (const r of paged) {
      const path = fill(r.path);
      expect(path, `no ids for ${r.path}`).to.not.contain('{');
      expectErrorBody(await o.t.admin.post(path, { pageRequest: { page: 0, size: 1001 } }), 400);
      const ok = await o.t.admin.post<{ pageRequest: { size: number } }>(path, { pageRequest: { page: 0, size: 1000 } });
      expect(ok.status, `${r.path}: ${ok.text}`).to.equal(200);
      // An export streams records, not a page: its answer has no pageRequest to echo.
      if (!r.path.endsWith('/export')) expect(ok.body.pageRequest.size).to.equal(1000);
    }
    const queried = o.t.server.handle.routes.filter((r) => r.query && 'size' in (r.query.describe().keys ?? {}));
    expect(queried.length).to.be.greaterThanOrEqual(2);
    for (const r of queried) {
      const path = r.path.replace(/\{[^}]+\}/, endpointId);
      expectErrorBody(await o.t.admin.get(`${path}?size=1001`), 400);
      expect((await o.t.admin.get(`${path}?size=1000`)).status).to.equal(200);
    }
  });

  it('every array in every request body is bounded: maxItems in the document, or 413 in code', () => {
    const unbounded = unboundedArrays(o.t.server.handle.openapi);
    expect(unbounded.filter((w) => !BOUNDED_IN_CODE.has(w))).to.deep.equal([]);
    expect(unbounded.length, 'an array bounded in code is gone or renamed: update BOUNDED_IN_CODE').to.equal(BOUNDED_IN_CODE.size);
  });

  it('arrays past their bound → 400', async () => {
    const many = (n: number, f: (i: number) => unknown): unknown[] => Array.from({ length: n }, (_, i) => f(i));
    expectErrorBody(await o.t.admin.post('/report/host-info/aggregation', { orgIds: many(1001, (i) => `o${i}`), column: 'os' }), 400);
    expect((await o.t.admin.post('/report/host-info/aggregation', { orgIds: many(1000, (i) => `o${i}`), column: 'os' })).status).to.equal(200);
    expectErrorBody(await o.t.admin.post('/utm-endpoint/count', { connectionStatuses: many(11, () => 'CONNECTED') }), 400);
    expectErrorBody(await o.t.admin.post('/endpoint/page-search', { pageRequest: { sort: many(6, () => ({ field: 'displayName' })) } }), 400);
    const utm = await o.t.world.utm(o.org);
    const ops = many(1001, () => ({ op: 'test', path: '/orgId', value: o.org }));
    expectErrorBody(await o.t.admin.request('PATCH', `/utm-endpoint/${utm.id}`, { body: ops, contentType: 'application/json-patch+json' }), 400);
    expectErrorBody(await o.t.admin.post(`/command/endpoint/${endpointId}`, { command: 'ping', args: many(33, () => 'a') }), 400);
  });

  it(`aggregations answer at most ${MAX_AGGREGATION_BUCKETS} buckets; more distinct values → 400`, async function () {
    this.timeout(120_000);
    const wide = await o.t.world.org();
    const child = await o.t.world.org(wide);
    // One agent per distinct operating system name: 10,000 in the org, one more in its child.
    const docs = Array.from({ length: MAX_AGGREGATION_BUCKETS + 1 }, (_, i) =>
      agentDoc(uid(`agg${i}`), i < MAX_AGGREGATION_BUCKETS ? wide : child, { displayName: `host-${i}`, hostInfo: { os: `os-${i}` } }),
    );
    await createEndpointDocs(o.t.server.store, docs);
    const all = await o.t.admin.post<{ key: string; count: number }[]>('/report/host-info/aggregation', { orgIds: [wide], column: 'os' });
    expect(all.status, all.text.slice(0, 200)).to.equal(200);
    expect(all.body).to.have.length(MAX_AGGREGATION_BUCKETS);
    const tooMany = await o.t.admin.post('/report/host-info/aggregation', { orgIds: [wide, child], column: 'os' });
    expectErrorBody(tooMany, 400, `${P}/report/host-info/aggregation`);
    expect((tooMany.body as { message: string }).message).to.contain('narrow the criteria');
  });

  describe('time-outs', () => {
    let store: Awaited<ReturnType<typeof slowStore>>;
    before(async () => {
      store = await slowStore((await testElasticsearch()).url);
    });
    after(() => store.close());

    it('a request still running after ECS_REQUEST_TIMEOUT_MS → 503 with Retry-After and the section-7 body; the service serves again once the store is fast', async function () {
      this.timeout(60_000);
      const app = await startTestApp({ ECS_REQUEST_TIMEOUT_MS: '300', ECS_STORE_TIMEOUT_MS: '20000' }, { elasticsearchUrl: store.url });
      try {
        // The organization comes from the run's app: creating it under a 300 ms limit would
        // time out on a loaded machine before the slow store is even switched on.
        const org = o.org;
        store.delayMs = 2000;
        const res = await app.admin.post('/endpoint/page-search', { criteria: { orgId: org } });
        expectErrorBody(res, 503, `${P}/endpoint/page-search`);
        expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
        expect((res.body as { message: string }).message).to.contain('did not complete within 300 ms');
        store.delayMs = 0;
        // Once fast, a search answers 200; on a loaded machine one may still miss 300 ms, so a
        // few tries, each of which may only be that same time-out.
        let again = await app.admin.post('/endpoint/page-search', { criteria: { orgId: org } });
        for (let i = 0; i < 5 && again.status === 503; i++) {
          expect((again.body as { message: string }).message).to.contain('did not complete within 300 ms');
          again = await app.admin.post('/endpoint/page-search', { criteria: { orgId: org } });
        }
        expect(again.status, again.text).to.equal(200);
      } finally {
        store.delayMs = 0;
        await app.close();
      }
    });

    it('a store slower than ECS_STORE_TIMEOUT_MS → 503 with Retry-After (the store client gives up first)', async function () {
      this.timeout(60_000);
      const app = await startTestApp({ ECS_REQUEST_TIMEOUT_MS: '20000', ECS_STORE_TIMEOUT_MS: '300' }, { elasticsearchUrl: store.url });
      try {
        const o = await app.world.org();
        store.delayMs = 2000;
        const res = await app.admin.post('/endpoint/page-search', { criteria: { orgId: o } });
        expectErrorBody(res, 503);
        expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
        expect((res.body as { message: string }).message).to.contain('data store');
        store.delayMs = 0;
        expect((await app.admin.post('/endpoint/page-search', { criteria: { orgId: o } })).status).to.equal(200);
      } finally {
        store.delayMs = 0;
        await app.close();
      }
    });

    it('a client that dribbles its headers is cut off after ECS_HEADERS_TIMEOUT_MS (408, connection closed)', async function () {
      this.timeout(30_000);
      const app = await startTestApp({ ECS_HEADERS_TIMEOUT_MS: '1000' });
      try {
        let n = 0;
        const res = await dribble(app.url, `GET ${P}/client-version/default HTTP/1.1\r\nHost: x\r\n`, () => `x-slow-${n++}: y\r\n`, 15_000);
        expect(res.closed, 'the server still holds the connection').to.equal(true);
        expect(res.answer).to.match(/^HTTP\/1\.1 408/);
        // A client that sends its headers at a normal pace is served.
        expect((await app.anon.get('/client-version/default')).status).to.equal(200);
      } finally {
        await app.close();
      }
    });

    it('a client that dribbles its body cannot hold the connection past the request time-out', async function () {
      this.timeout(30_000);
      const app = await startTestApp({ ECS_REQUEST_TIMEOUT_MS: '500' });
      try {
        const head = `POST ${P}/endpoint/page-search HTTP/1.1\r\nHost: x\r\nx-auth-token: ${String(app.admin.token)}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"criteria":{"basic":"`;
        const res = await dribble(app.url, head, () => 'a', 20_000);
        expect(res.closed, 'the server still holds the connection').to.equal(true);
        expect(res.answer).to.match(/^HTTP\/1\.1 (503|408)/);
      } finally {
        await app.close();
      }
    });
  });

  describe('ECS_RATE_LIMIT_PER_MINUTE', () => {
    it('the request over the per-token limit → 429 with Retry-After and the section-7 body; other tokens are unaffected', async function () {
      this.timeout(30_000);
      const app = await startTestApp({ ECS_RATE_LIMIT_PER_MINUTE: '20' });
      try {
        const o = await app.world.org();
        const reader = app.world.as(await app.world.token('reader', o));
        const other = app.world.as(await app.world.token('reader', o));
        for (let i = 0; i < 20; i++) expect((await reader.get('/org-config/target-versions')).status, `request ${i + 1}`).to.equal(200);
        const limited = await reader.get('/org-config/target-versions');
        expectErrorBody(limited, 429, `${P}/org-config/target-versions`);
        const retryAfter = Number(limited.headers.get('retry-after'));
        expect(retryAfter).to.be.within(1, 60);
        expect((await reader.post('/endpoint/page-search', {})).status, 'the limit is per token, not per route').to.equal(429);
        expect((await other.get('/org-config/target-versions')).status).to.equal(200);
        // Without a token (an operation the spec leaves unsecured) nothing is counted per token.
        for (let i = 0; i < 25; i++) expect((await app.anon.get('/client-version/default')).status).to.equal(200);
      } finally {
        await app.close();
      }
    });

    it('is off by default', async () => {
      const reader = o.t.world.as(await o.t.world.token('reader', o.org));
      for (let i = 0; i < 40; i++) expect((await reader.get('/org-config/target-versions')).status).to.equal(200);
    });
  });
});
