/**
 * Idempotency-Key on the creates whose record id the server generates: a repeat
 * answers the first outcome and writes nothing more, another request under the same key is a
 * 409, keys belong to their token and expire. The app talks to the store through a small
 * proxy that can lose the answer to one create after Elasticsearch wrote it — the case the
 * issue found on a degraded cluster — and a dedicated node is frozen for a real outage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { until, waitFor } from '../helpers/wait.js';
import { Client } from '@elastic/elasticsearch';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type EndpointRecord, type TestApp } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { startLossyProxy, type LossyProxy } from '../helpers/lossy-proxy.js';
import type { Api, ApiResponse } from '../helpers/http.js';
import { freePort, startLocalNode, stopLocalNode, type LocalNode } from '../../src/dev/local-elasticsearch.js';

const key = (): string => uid('idem-key');
const withKey = (k: string): { headers: Record<string, string> } => ({ headers: { 'Idempotency-Key': k } });

/** Agents of one organization, counted through the API's search. */
async function agentCount(api: Api, orgId: string): Promise<number> {
  const res = await api.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId }, pageRequest: { size: 1 } });
  expect(res.status, res.text).to.equal(200);
  return res.body.totalCount;
}

describe('Idempotency-Key: retries of server-id creates without duplicates', function () {
  this.timeout(120_000);
  let proxy: LossyProxy;
  let app: TestApp;
  let adminA: Api;
  let orgA: string;
  let orgB: string;
  let adminB: Api;

  before(async () => {
    proxy = await startLossyProxy((await testElasticsearch()).url);
    app = await startTestApp({}, { elasticsearchUrl: proxy.url });
    ({ orgA, orgB, adminA, adminB } = await app.world.tenants());
  });
  after(async () => {
    await app?.close();
    await proxy?.close();
  });

  it('the same key and body twice: the same status and body, one record; the repeat is marked replayed', async () => {
    const org = await app.world.org(orgA);
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    const first = await adminA.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(first.status, first.text).to.equal(200);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await adminA.post<EndpointRecord>('/endpoint', { displayName: body.displayName, orgId: org }, withKey(k));
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await agentCount(adminA, org)).to.equal(1);
  });

  it('the same key with another body: 409 with the section-7 body, and nothing written', async () => {
    const org = await app.world.org(orgA);
    const k = key();
    expect((await adminA.post('/endpoint', { orgId: org, displayName: 'one' }, withKey(k))).status).to.equal(200);
    const other = await adminA.post('/endpoint', { orgId: org, displayName: 'two' }, withKey(k));
    expectErrorBody(other, 409, '/endpoint-control-service/v1/endpoint');
    expect((other.body as { exception: string }).exception).to.equal('IdempotencyKeyReusedError');
    expect(await agentCount(adminA, org)).to.equal(1);
  });

  it('the same key from another token is another key: independent records', async () => {
    const k = key();
    const a = await adminA.post<EndpointRecord>('/lte-endpoint', { orgId: orgA, displayName: 'router' }, withKey(k));
    const b = await adminB.post<EndpointRecord>('/lte-endpoint', { orgId: orgB, displayName: 'router' }, withKey(k));
    expect(a.status, a.text).to.equal(200);
    expect(b.status, b.text).to.equal(200);
    expect(a.body.id).to.not.equal(b.body.id);
    expect(b.body.orgId).to.equal(orgB);
  });

  it('without the header every create makes a record', async () => {
    const org = await app.world.org(orgA);
    const body = { orgId: org, displayName: uid('agent') };
    const [one, two] = [await adminA.post<EndpointRecord>('/endpoint', body), await adminA.post<EndpointRecord>('/endpoint', body)];
    expect(one.status).to.equal(200);
    expect(two.status).to.equal(200);
    expect(one.body.id).to.not.equal(two.body.id);
    expect(await agentCount(adminA, org)).to.equal(2);
  });

  it('a malformed key is a 400 (too long, not printable ASCII), and nothing is written', async () => {
    const org = await app.world.org(orgA);
    for (const bad of ['k'.repeat(256), 'schl\u00fcssel']) {
      expectErrorBody(await adminA.post('/endpoint', { orgId: org }, withKey(bad)), 400);
    }
    expect(await agentCount(adminA, org)).to.equal(0);
  });

  it('a 4xx outcome is remembered: a repeat answers it again although the request would now succeed', async () => {
    const serialId = uid('SN').toUpperCase();
    const holder = await adminA.post<EndpointRecord>('/utm-endpoint', { orgId: orgA, serialId });
    expect(holder.status).to.equal(200);
    const k = key();
    const taken = await adminA.post('/utm-endpoint', { orgId: orgA, serialId }, withKey(k));
    expectErrorBody(taken, 409);
    expect((await adminA.delete(`/endpoint/${holder.body.id}`)).status).to.equal(204);
    const repeat = await adminA.post('/utm-endpoint', { orgId: orgA, serialId }, withKey(k));
    expectErrorBody(repeat, 409);
    expect(repeat.headers.get('idempotent-replayed')).to.equal('true');
    // The serial is free now: a new key creates.
    expect((await adminA.post('/utm-endpoint', { orgId: orgA, serialId }, withKey(key()))).status).to.equal(200);
  });

  it('concurrent requests with one key answer one record', async () => {
    const org = await app.world.org(orgA);
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    const answers = await Promise.all(Array.from({ length: 5 }, () => adminA.post<EndpointRecord>('/endpoint', body, withKey(k))));
    for (const a of answers) expect(a.status, a.text).to.equal(200);
    expect(new Set(answers.map((a) => a.body.id)).size).to.equal(1);
    expect(await agentCount(adminA, org)).to.equal(1);
  });

  it('a create written whose answer was lost (503) and retried with its key yields exactly one record', async () => {
    const org = await app.world.org(orgA);
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    proxy.loseAnswerOfNext(/^PUT \/[^/]*-endpoints\/_create\//);
    const lostBefore = proxy.lost;
    const first = await adminA.post('/endpoint', body, withKey(k));
    expect(proxy.lost).to.equal(lostBefore + 1);
    expectErrorBody(first, 503);
    expect(first.headers.get('retry-after')).to.be.a('string');
    // The write landed although the service answered 503 (searchable after the next scheduled refresh:
    // a write answered 503 carries no visibility promise).
    const landed = await waitFor(() => agentCount(adminA, org), (n) => n === 1, 10_000);
    expect(landed.value).to.equal(1);
    const retry = await adminA.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(retry.status, retry.text).to.equal(200);
    expect(await agentCount(adminA, org)).to.equal(1);
    const replay = await adminA.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(replay.body).to.deep.equal(retry.body);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('the same for a command message: a lost answer, a retry, one message', async () => {
    const ep = await app.world.endpoint(orgA);
    const k = key();
    const msg = { module: 'cmd', name: 'ping' };
    proxy.loseAnswerOfNext(/^PUT \/[^/]*-command-messages\/_create\//);
    const first = await adminA.post(`/command-message/endpoint/${ep.id}`, msg, withKey(k));
    expectErrorBody(first, 503);
    const retry = await adminA.post<{ id: string }>(`/command-message/endpoint/${ep.id}`, msg, withKey(k));
    expect(retry.status, retry.text).to.equal(201);
    const again = await adminA.post<{ id: string }>(`/command-message/endpoint/${ep.id}`, msg, withKey(k));
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(retry.body);
    const list = await adminA.get<{ totalCount: number; items: { id: string }[] }>(`/command-message/endpoint/${ep.id}`);
    expect(list.body.totalCount).to.equal(1);
    expect(list.body.items[0].id).to.equal(retry.body.id);
  });

  it('the OpenAPI document declares the header (as an extension) and the 409 on every such create', async () => {
    const doc = (await app.anon.get<{ paths: Record<string, Record<string, { parameters: { name: string; 'x-extension'?: boolean }[]; responses: Record<string, unknown> }>> }>('/openapi.json')).body;
    const keyed = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.parameters.some((x) => x.name === 'Idempotency-Key'))
        .map(([m, op]) => ({ at: `${m.toUpperCase()} ${p}`, op })),
    );
    expect(keyed.map((k) => k.at)).to.include.members([
      'POST /endpoint-control-service/v1/endpoint',
      'POST /endpoint-control-service/v1/utm-endpoint',
      'POST /endpoint-control-service/v1/lte-endpoint',
      'POST /endpoint-control-service/v1/command-message/endpoint/{endpoint-id}',
    ]);
    for (const { op } of keyed) {
      expect(op.responses).to.have.property('409');
      expect(op.parameters.find((x) => x.name === 'Idempotency-Key')?.['x-extension']).to.equal(true);
    }
  });
});

describe('Idempotency-Key expiry', function () {
  this.timeout(120_000);
  const TTL_SECONDS = 2;
  let app: TestApp;
  let admin: Api;
  let org: string;

  before(async () => {
    app = await startTestApp({ ECS_IDEMPOTENCY_KEY_TTL_SECONDS: String(TTL_SECONDS) });
    org = await app.world.org();
    admin = app.world.as(await app.world.token('admin', org));
  });
  after(() => app?.close());

  it('an expired key is a new key: the same request creates again, another body is no longer a conflict; expired records are purged', async () => {
    // Records of other keys, left to expire: only the purge removes them.
    for (let i = 0; i < 3; i++) expect((await admin.post('/endpoint', { orgId: org }, withKey(key()))).status).to.equal(200);
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    const first = await admin.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(first.status).to.equal(200);
    let later: ApiResponse<EndpointRecord> | undefined;
    await until('the key expires', async () => {
      later = await admin.post<EndpointRecord>('/endpoint', body, withKey(k));
      return later.headers.get('idempotent-replayed') === null;
    }, 60_000, 200);
    expect(later?.status).to.equal(200);
    expect(later?.body.id).to.not.equal(first.body.id);
    await until('the key expires again', async () => (await admin.post('/endpoint', { orgId: org, displayName: 'other' }, withKey(k))).status === 200, 60_000, 200);

    // The purge runs in the background of keyed requests; search sees the index after a refresh.
    const client = new Client({ node: (await testElasticsearch()).url });
    try {
      const index = `${RUN_PREFIX}-idempotency-keys`;
      const expiredBefore = async (instant: string): Promise<number> => {
        await client.indices.refresh({ index });
        return (await client.count({ index, query: { range: { expiresAt: { lt: instant } } } })).count;
      };
      const cutoff = new Date().toISOString();
      await until('key records expired before now purged', async () => {
        // Each keyed request may start the purge (at most once per TTL); its own record expires after the cut-off.
        await admin.post('/endpoint', { orgId: org, displayName: uid('nudge') }, withKey(key()));
        return (await expiredBefore(cutoff)) === 0;
      }, 60_000, 200);
    } finally {
      await client.close();
    }
  });
});

describe('Idempotency-Key across a store outage (a dedicated node, frozen)', function () {
  this.timeout(600_000);
  const NODE = 'idempotency-outage';
  const instanceDir = path.resolve('.local', `es-${NODE}`);
  let node: LocalNode;
  let proxy: LossyProxy;
  let app: TestApp;
  let admin: Api;

  before(async () => {
    await stopLocalNode(NODE);
    fs.rmSync(path.join(instanceDir, 'data'), { recursive: true, force: true });
    node = await startLocalNode({ name: NODE, port: await freePort(), heap: '384m', log: (l) => process.stderr.write(`  [es-idem] ${l}\n`) });
    proxy = await startLossyProxy(node.url);
    app = await startTestApp(
      { ECS_INDEX_PREFIX: `${RUN_PREFIX}-idem`, ECS_STORE_TIMEOUT_MS: '1000', ECS_REQUEST_TIMEOUT_MS: '3000' },
      { elasticsearchUrl: proxy.url },
    );
    admin = app.world.as(await app.world.token('system'));
  });
  after(async () => {
    await app?.close();
    await proxy?.close();
    await stopLocalNode(NODE);
    fs.rmSync(path.join(instanceDir, 'data'), { recursive: true, force: true });
  });

  const freeze = (): void => void process.kill(-node.pid, 'SIGSTOP');
  const thaw = (): void => void process.kill(-node.pid, 'SIGCONT');

  /** A create with a key during the outage: 503 with Retry-After. */
  async function createDuringOutage(body: Record<string, unknown>, k: string, freezeFirst: boolean): Promise<void> {
    let during: ApiResponse;
    if (freezeFirst) freeze();
    else proxy.beforeNext(/^PUT \/[^/]*-endpoints\/_create\//, freeze);
    try {
      during = await admin.post('/endpoint', body, withKey(k));
    } finally {
      thaw();
    }
    expectErrorBody(during, 503);
    expect(Number(during.headers.get('retry-after'))).to.be.greaterThan(0);
    await until('ready after SIGCONT', async () => (await app.anon.get('/health/ready')).status === 200, 60_000, 200);
  }

  it('the node frozen before the request: 503; retried after recovery: 200 and exactly one record', async () => {
    const org = await app.world.org();
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    await createDuringOutage(body, k, true);
    const retry = await admin.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(retry.status, retry.text).to.equal(200);
    const again = await admin.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(again.body).to.deep.equal(retry.body);
    expect(await agentCount(admin, org)).to.equal(1);
  });

  it('the node frozen with the create sent (the issue: 503, yet written once the node is back); retried: 200, the same one record', async () => {
    const org = await app.world.org();
    const k = key();
    const body = { orgId: org, displayName: uid('agent') };
    await createDuringOutage(body, k, false);
    await until('the create sent before the freeze lands', async () => (await agentCount(admin, org)) === 1, 60_000, 200);
    const landed = await admin.post<{ items: EndpointRecord[] }>('/endpoint/page-search', { criteria: { orgId: org } });
    const retry = await admin.post<EndpointRecord>('/endpoint', body, withKey(k));
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.body.id).to.equal(landed.body.items[0].id);
    expect(await agentCount(admin, org)).to.equal(1);
  });
});
