/**
 * Admission lanes shed instead of queueing, agents keep their lane while heavy work
 * is saturated, failed authentication does not reach the store, security headers.
 *
 * The heavy lane is filled with held requests, not with time: a proxy in front of the run's
 * Elasticsearch holds every store request whose body carries a marker until the test lets it
 * go, and counts the token lookups (GET <prefix>-tokens/_doc/<hash>, and each id of a multi-get) that reach the store.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { P, type Api } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

interface StoreProxy {
  url: string;
  /** Store requests held now. */
  readonly held: number;
  /** Token lookups that reached the store (single gets, and the ids of multi-gets). */
  readonly tokenLookups: number;
  /** Holds requests whose body contains `marker` until `release()`. */
  holdBodiesWith(marker: string): void;
  release(): void;
  close(): Promise<void>;
}

async function storeProxy(target: string): Promise<StoreProxy> {
  let marker: string | undefined;
  let tokenLookups = 0;
  const held: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'GET' && /-tokens\/_doc\//.test(req.url ?? '')) tokenLookups += 1;
      // Concurrent lookups travel in one multi-get: each id it carries is a lookup.
      if (/-tokens\/_mget/.test(req.url ?? '')) tokenLookups += (JSON.parse(body.toString() || '{}') as { ids?: unknown[] }).ids?.length ?? 0;
      const forward = (): void => {
        // A connection per request: a kept-alive one that Elasticsearch closed would fail the service's call.
        const up = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers, agent: false }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(body);
      };
      if (marker !== undefined && body.includes(marker)) held.push(forward);
      else forward();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return held.length;
    },
    get tokenLookups() {
      return tokenLookups;
    },
    holdBodiesWith(m: string) {
      marker = m;
    },
    release() {
      marker = undefined;
      for (const go of held.splice(0)) go();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? NaN : Number(line.split(' ').pop());
}

describe('admission lanes', function () {
  this.timeout(60_000);
  let proxy: StoreProxy;
  let t: TestApp;
  let org: string;
  let endpointId: string;
  let readerA: Api;
  let readerB: Api;
  let agent: Api;

  before(async function () {
    // The first app of a run creates the run's indices, slow on a loaded machine.
    this.timeout(240_000);
    proxy = await storeProxy((await testElasticsearch()).url);
    // One heavy request and one report at a time, no queue: each lane is full as soon as one request is held.
    t = await startTestApp(
      { ECS_ADMISSION: 'true', ECS_LANE_LIMITS: 'heavy=1,report=1', ECS_LANE_QUEUE_MS: 'heavy=0,report=0' },
      { elasticsearchUrl: proxy.url },
    );
    org = await t.world.org();
    endpointId = (await t.world.endpoint(org)).id;
    readerA = t.world.as(await t.world.token('reader', org));
    readerB = t.world.as(await t.world.token('reader', org));
    agent = t.world.as(await t.world.token('agent', org, endpointId));
  });
  after(async () => {
    proxy.release();
    await t.close();
    await proxy.close();
  });

  it('declares a lane on every route', () => {
    for (const r of t.server.handle.routes) expect(['agent', 'checkin', 'report', 'admin', 'interactive', 'heavy'], r.operationId).to.include(r.lane);
    const lane = (id: string): string | undefined => t.server.handle.routes.find((r) => r.operationId === id)?.lane;
    expect(lane('connectEndpoint')).to.equal('agent');
    expect(lane('searchEndpoints')).to.equal('interactive');
    expect(lane('getEndpointsOfDescendantOrgs')).to.equal('heavy');
    expect(lane('hostInfoAggregation')).to.equal('heavy');
    expect(lane('createToken')).to.equal('admin');
    // An agent taking up its channel: only the check-in runs in its lane, never the wait.
    expect(lane('holdAgentChannel')).to.equal('checkin');
    // Agents' bulk reports run a few at a time, beside the agents' short writes.
    expect(lane('replaceEndpointSoftwareInventory')).to.equal('report');
    expect(lane('ingestDiscoveredNetworkHosts')).to.equal('report');
    expect(lane('addEndpointSoftware')).to.equal('agent');
  });

  it('a full heavy lane sheds at once: 429 for the caller holding it, 503 for others, Retry-After and the section-7 body; agents and reads still pass', async () => {
    // A heavy read whose store request names an organization of its own (outside the readers'
    // subtree, so none of their requests names it): the proxy holds it.
    const marker = await t.world.org(undefined, uid('held'));
    proxy.holdBodiesWith(marker);
    const holding = t.admin.post('/report/host-info/aggregation', { orgIds: [marker], column: 'os' });
    await until('the heavy request to reach the store', () => proxy.held === 1, 15_000, 0);

    const metrics = await t.anon.get<string>('/metrics');
    expect(metricValue(metrics.body, 'ecs_admission_in_flight', 'lane="heavy"')).to.equal(1);
    expect(metricValue(metrics.body, 'ecs_admission_limit', 'lane="heavy"')).to.equal(1);

    const own = await t.admin.get(`/endpoint/by-org-id/${org}/all-descendants`);
    expectErrorBody(own, 429, `${P}/endpoint/by-org-id/${org}/all-descendants`);
    expect(own.headers.get('retry-after')).to.match(/^[1-9]\d*$/);

    const other = await readerB.get(`/endpoint/by-org-id/${org}/all-descendants`);
    expectErrorBody(other, 503, `${P}/endpoint/by-org-id/${org}/all-descendants`);
    expect(other.headers.get('retry-after')).to.match(/^[1-9]\d*$/);

    // The agents' lane and the interactive lane (a page search) are untouched by the saturated heavy lane.
    const page = await readerB.post('/endpoint/page-search', { criteria: {} });
    expect(page.status, page.text).to.equal(200);
    const connected = await agent.post(`/endpoint/${endpointId}/connect`);
    expect(connected.status, connected.text).to.equal(204);
    const read = await agent.get(`/endpoint/${endpointId}`);
    expect(read.status, read.text).to.equal(200);
    expect(proxy.held).to.equal(1);

    const shed = await t.anon.get<string>('/metrics');
    expect(metricValue(shed.body, 'ecs_admission_shed_total', 'lane="heavy",status="429"')).to.equal(1);
    expect(metricValue(shed.body, 'ecs_admission_shed_total', 'lane="heavy",status="503"')).to.equal(1);

    proxy.release();
    const done = await holding;
    expect(done.status, done.text).to.equal(200);
    // The slot is free again.
    const after = await readerB.post('/report/host-info/aggregation', { orgIds: [org], column: 'os' });
    expect(after.status, after.text).to.equal(200);
  });

  it('a full report lane sheds a second inventory report (503, Retry-After) while the agents\' lane still serves; the report retried lands', async () => {
    const other = (await t.world.endpoint(org)).id;
    const reporter = t.world.as(await t.world.token('agent', org, other));
    // The report's bulk write names a product no other request names: the proxy holds it.
    const marker = uid('held-product');
    proxy.holdBodiesWith(marker);
    const holding = reporter.post(`/endpoint/${other}/software-inventory`, [{ name: marker, version: '1.0' }]);
    await until('the report to reach its bulk write', () => proxy.held === 1, 15_000, 0);
    const metrics = await t.anon.get<string>('/metrics');
    expect(metricValue(metrics.body, 'ecs_admission_in_flight', 'lane="report"')).to.equal(1);

    const second = await agent.post(`/endpoint/${endpointId}/software-inventory`, [{ name: 'curl', version: '8.0' }]);
    expectErrorBody(second, 503, `${P}/endpoint/${endpointId}/software-inventory`);
    expect(second.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    const connected = await agent.post(`/endpoint/${endpointId}/connect`);
    expect(connected.status, connected.text).to.equal(204);
    expect(proxy.held).to.equal(1);

    proxy.release();
    expect((await holding).status).to.equal(201);
    const retried = await agent.post(`/endpoint/${endpointId}/software-inventory`, [{ name: 'curl', version: '8.0' }]);
    expect(retried.status, retried.text).to.equal(201);
    const stored = await agent.get<{ name: string }[]>(`/endpoint/${endpointId}/software-inventory`);
    expect(stored.body.map((e) => e.name)).to.deep.equal(['curl']);
  });

  it('sets nosniff on every answer and no-store on API answers (token minting, errors, reads)', async () => {
    const minted = await t.admin.post('/admin/tokens', { name: 'h', role: 'reader', orgId: org });
    expect(minted.status).to.equal(201);
    const read = await readerA.get(`/endpoint/${endpointId}`);
    const denied = await t.world.as('ecs_not-a-token').get(`/endpoint/${endpointId}`);
    expect(denied.status).to.equal(401);
    for (const res of [minted, read, denied]) {
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    }
    const docs = await t.anon.get(`${P}/docs`);
    expect(docs.headers.get('x-content-type-options')).to.equal('nosniff');
  });
});

describe('failed authentication costs the store nothing', function () {
  this.timeout(60_000);
  let proxy: StoreProxy;
  let t: TestApp;
  let org: string;
  let endpointId: string;

  before(async function () {
    // The first app of a run creates the run's indices, slow on a loaded machine.
    this.timeout(240_000);
    proxy = await storeProxy((await testElasticsearch()).url);
    // No positive cache: every valid request looks its token up, so the budget is what decides.
    t = await startTestApp(
      { ECS_AUTH_FAILURES_PER_MINUTE: '5', ECS_TOKEN_CACHE_SECONDS: '0', ECS_TOKEN_NEGATIVE_CACHE_SECONDS: '60' },
      { elasticsearchUrl: proxy.url },
    );
    org = await t.world.org();
    endpointId = (await t.world.endpoint(org)).id;
  });
  after(async () => {
    await t.close();
    await proxy.close();
  });

  it('one unknown token repeated is looked up once (negative cache)', async () => {
    const bogus = t.world.as(`ecs_${uid('bogus')}`);
    const before = proxy.tokenLookups;
    for (let i = 0; i < 30; i++) expectErrorBody(await bogus.get(`/endpoint/${endpointId}`), 401);
    expect(proxy.tokenLookups - before).to.equal(1);
  });

  it('a flood of distinct unknown tokens stops reaching the store (429 before any lookup), while known valid tokens from the same address keep working', async () => {
    const valid = t.world.as(await t.world.token('reader', org));
    expect((await valid.get(`/endpoint/${endpointId}`)).status).to.equal(200);

    const before = proxy.tokenLookups;
    const answers: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await t.world.as(`ecs_${uid('flood')}`).get(`/endpoint/${endpointId}`);
      if (res.status === 429) {
        expectErrorBody(res, 429, `${P}/endpoint/${endpointId}`);
        expect(res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
      }
      answers.push(res.status);
    }
    // The budget of 5 per minute: the first test spent one of it.
    expect(answers.filter((s) => s === 401).length).to.be.within(1, 5);
    expect(answers.filter((s) => s === 429).length).to.be.at.least(35);
    expect(proxy.tokenLookups - before).to.be.at.most(5);

    // The valid token was seen before: it is still looked up (cache 0) and admitted.
    const lookupsBefore = proxy.tokenLookups;
    const ok = await valid.get(`/endpoint/${endpointId}`);
    expect(ok.status, ok.text).to.equal(200);
    expect(proxy.tokenLookups - lookupsBefore).to.equal(1);
  });
});
