/**
 * The door (src/http/door.ts): while a reading lane's queue stands, its requests are answered
 * 503 before the app reads them — matched by method and path (with path parameters), in the
 * section-7 body with the API's headers — and everything else goes through.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Admission } from '../../src/http/admission.js';
import { door } from '../../src/http/door.js';
import { API_PREFIX, defineRoute, ok, type RouteSpec } from '../../src/http/routes.js';
import { createLogger } from '../../src/log.js';

const route = (method: 'GET' | 'POST', path: string, lane: RouteSpec['lane']): RouteSpec =>
  defineRoute({ operationId: `${method}${path}`, method, path, summary: path, tag: 't', sec: true, roles: [], lane, responses: {}, errors: [503], handler: async () => ok({}) });

describe('shedding at the door', () => {
  let server: http.Server;
  let base: string;
  let released: () => void;
  let passed = 0;
  const clock = { t: 0 };
  const a = new Admission({ enabled: true, now: () => clock.t, fixedLimits: { heavy: 1 }, queueMs: { heavy: 60_000 } });
  const routes = [route('POST', '/endpoint/page-search', 'heavy'), route('POST', '/org/{orgId}/summary', 'heavy'), route('POST', '/endpoint/{id}/connect', 'agent')];

  before(async () => {
    const atDoor = door(routes, a, createLogger('silent'));
    server = http.createServer((req, res) => {
      if (atDoor(req, res)) return;
      passed += 1;
      req.resume();
      res.end('app');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_PREFIX}`;
    // The heavy lane: one request running, one queued; then the queue stands.
    const gate = new Promise<void>((r) => (released = r));
    void a.run('heavy', 'x', () => gate);
    void a.run('heavy', 'y', async () => undefined);
  });
  after(async () => {
    released();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('lets everything through while no queue stands', async () => {
    const res = await fetch(`${base}/endpoint/page-search`, { method: 'POST', body: '{}' });
    expect(await res.text()).to.equal('app');
  });

  it("answers a standing lane's requests 503 with the section-7 body, Retry-After and the API's headers; other lanes and paths go through", async () => {
    clock.t = 10_000;
    for (const path of ['/endpoint/page-search', '/org/org-1/summary', '/org/org-1/summary?x=1']) {
      const res = await fetch(`${base}${path}`, { method: 'POST', body: '{"criteria":{}}' });
      expect(res.status, path).to.equal(503);
      expect(res.headers.get('retry-after')).to.equal('1');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).to.include({ status: 503, error: 'Service Unavailable', exception: 'ServiceUnavailableError', path: API_PREFIX + path.split('?')[0] });
      expect(body.message).to.be.a('string');
    }
    const before = passed;
    for (const [method, path] of [['POST', '/endpoint/e-1/connect'], ['GET', '/endpoint/page-search'], ['POST', '/org/a/b/summary'], ['POST', '/unknown']]) {
      expect(await (await fetch(`${base}${path}`, { method })).text(), `${method} ${path}`).to.equal('app');
    }
    expect(passed - before).to.equal(4);
  });
});
