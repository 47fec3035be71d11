/**
 * Store outage: the service outlives its Elasticsearch node. This test cannot stop the run's
 * shared node, so it starts its own (`.local/es-outage`, a free port, wiped data), writes
 * through the service, then freezes the node (SIGSTOP: connections hang) and kills it
 * (SIGKILL of its process group, with writes in flight), and starts it again on the same
 * port and data directory. Throughout: 503 with Retry-After and the section-7 body within the
 * request time-out, /health/ready 503, /health/live 200, heap flat, and afterwards every
 * write acknowledged before the outage is there, without restarting the service.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { Api, ApiResponse } from '../helpers/http.js';
import { freePort, startLocalNode, stopLocalNode, type LocalNode } from '../../src/dev/local-elasticsearch.js';
import { retryPause, until } from '../helpers/wait.js';

const NODE = 'outage';
const REQUEST_TIMEOUT_MS = 3000;
const STORE_TIMEOUT_MS = 1000;
const instanceDir = path.resolve('.local', `es-${NODE}`);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Heap in use after a full collection. */
function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The node's process group (its launcher and the server JVM): signals reach both. */
function signalNode(node: LocalNode, signal: NodeJS.Signals): void {
  process.kill(-node.pid, signal);
}

/**
 * True once every process of the node's group is stopped (state `T` in /proc). A stop signal is
 * only queued when kill returns: a busy JVM can answer a request or two before all its threads
 * have stopped, which is not the outage this test means.
 */
function groupStopped(node: LocalNode): boolean {
  const members = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        // state and pgid: the 3rd and 5th fields, after the command's closing parenthesis.
        const f = fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ');
        return { state: f[0], pgid: Number(f[2]) };
      } catch {
        return undefined; // ended meanwhile
      }
    })
    .filter((p): p is { state: string; pgid: number } => p !== undefined && p.pgid === node.pid);
  return members.length > 0 && members.every((p) => p.state === 'T');
}

interface Outcome {
  res: ApiResponse;
  ms: number;
}

async function timed(call: () => Promise<ApiResponse>): Promise<Outcome> {
  const start = Date.now();
  const res = await call();
  return { res, ms: Date.now() - start };
}

/** A failure the outage allows: 503, Retry-After, the section-7 body. */
function expectUnavailable(o: Outcome, what: string): void {
  expect(o.res.status, `${what}: ${o.res.text.slice(0, 200)}`).to.equal(503);
  expectErrorBody(o.res, 503);
  expect(Number(o.res.headers.get('retry-after')), `${what}: Retry-After`).to.be.greaterThan(0);
  expect(o.ms, `${what}: answered after ${o.ms} ms`).to.be.lessThan(REQUEST_TIMEOUT_MS + 2000);
}

describe('store outage: Elasticsearch stops and starts under the running service', function () {
  this.timeout(900_000);
  let port: number;
  let node: LocalNode;
  let app: TestApp;
  let admin: Api;
  let org: string;
  const acked = { endpoints: [] as string[], licenses: [] as string[], connected: [] as string[] };
  const report: Record<string, unknown> = {};

  before(async () => {
    // A node left by an interrupted run is not reused: stopped, and its data wiped.
    await stopLocalNode(NODE);
    fs.rmSync(path.join(instanceDir, 'data'), { recursive: true, force: true });
    port = await freePort();
    node = await startLocalNode({ name: NODE, port, heap: '384m', log: (l) => process.stderr.write(`  [es-outage] ${l}\n`) });
    app = await startTestApp(
      { ECS_INDEX_PREFIX: `${RUN_PREFIX}-outage`, ECS_STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS), ECS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
      { elasticsearchUrl: node.url },
    );
    org = await app.world.org();
    admin = app.world.as(await app.world.token('admin', org));
  });

  after(async () => {
    await app?.close();
    await stopLocalNode(NODE);
    fs.rmSync(path.join(instanceDir, 'data'), { recursive: true, force: true });
    console.log(`      outage results: ${JSON.stringify(report)}`);
  });

  interface Writers {
    counts: { ok: number; unavailable: number };
    /** The first answer a writer met that the outage does not allow (that writer then stopped). */
    readonly failed: Error | undefined;
    stop(): Promise<{ ok: number; unavailable: number }>;
  }

  /** Writers that keep creating endpoints and licenses, remembering every 2xx, checking every failure. */
  function startWriters(n: number): Writers {
    let running = true;
    let failed: Error | undefined;
    const counts = { ok: 0, unavailable: 0 };
    const loops = Array.from({ length: n }, async (_, w) => {
      try {
        await write(w);
      } catch (err) {
        failed ??= err as Error;
        throw err;
      }
    });
    async function write(w: number): Promise<void> {
      for (let i = 0; running; i++) {
        const write =
          i % 2 === 0
            ? timed(() => admin.post<{ id: string }>('/endpoint', { orgId: org, displayName: uid(`w${w}`) }))
            : timed(() => admin.put<{ id: string }>(`/license/${uid('lic')}`, { type: 'ATC', orgId: org }));
        const o = await write;
        if (o.res.status === 200) {
          counts.ok++;
          (i % 2 === 0 ? acked.endpoints : acked.licenses).push((o.res.body as { id: string }).id);
        } else {
          counts.unavailable++;
          expectUnavailable(o, `write ${w}/${i}`);
          await retryPause(50);
        }
      }
    }
    return {
      counts,
      get failed() {
        return failed;
      },
      stop: async () => {
        running = false;
        await Promise.all(loops);
        return counts;
      },
    };
  }

  /** Waits for `n` writes acknowledged; a writer that met an answer the outage does not allow fails the test with it. */
  async function acknowledged(writers: Writers, n: number, what: string): Promise<void> {
    await until(what, () => writers.failed ?? writers.counts.ok >= n, 60_000);
    if (writers.failed) throw writers.failed;
  }

  it('serves while the node is up: writes acknowledged and remembered', async () => {
    for (let i = 0; i < 20; i++) {
      const ep = await admin.post<{ id: string }>('/endpoint', { orgId: org, displayName: uid('before') });
      expect(ep.status, ep.text).to.equal(200);
      acked.endpoints.push(ep.body.id);
      const connect = await admin.post(`/endpoint/${ep.body.id}/connect`);
      expect(connect.status).to.equal(204);
      acked.connected.push(ep.body.id);
    }
    expect((await app.anon.get('/health/ready')).status).to.equal(200);
    // The device migration opens its embedded database on first use (seconds of CPU, longer than this
    // test's request time-out: 503, then 409 while it runs): done here, while the node is up.
    await until('device migration warmed up', async () => (await app.admin.get('/device-migration/utm-devices')).status === 200, 60_000, 250);
  });

  it('a frozen node (connections hang): 503 within the request time-out, ready 503, live 200; it serves again when the node resumes', async () => {
    const writers = startWriters(4);
    await acknowledged(writers, 16, 'writes acknowledged before the freeze');
    signalNode(node, 'SIGSTOP');
    try {
      await until('every process of the node stopped', () => groupStopped(node), 10_000);
      const reads = await Promise.all(Array.from({ length: 10 }, () => timed(() => admin.get(`/endpoint/${acked.endpoints[0]}`))));
      reads.forEach((o, i) => expectUnavailable(o, `read ${i}`));
      const ready = await app.anon.get('/health/ready');
      expect(ready.status).to.equal(503);
      expect(ready.headers.get('retry-after')).to.be.a('string');
      expect((await app.anon.get('/health/live')).status).to.equal(200);
      report.frozenMaxMs = Math.max(...reads.map((o) => o.ms));
    } finally {
      signalNode(node, 'SIGCONT');
    }
    report.frozenWriters = await writers.stop();
    report.frozenRecoveryMs = (await until('ready after SIGCONT', async () => (await app.anon.get('/health/ready')).status === 200, 60_000, 250)).elapsedMs;
    // Readiness and the record reads may reach the resumed node a moment apart (a connection the
    // pool had given up on is tried again after its ping): the read must come back soon, not at once.
    await until('an acknowledged record readable after SIGCONT', async () => (await admin.get(`/endpoint/${acked.endpoints[0]}`)).status === 200, 10_000, 250);
  });

  it('a killed node with writes in flight: every request 503 within the request time-out, no crash, heap flat', async () => {
    const writers = startWriters(4);
    await acknowledged(writers, 16, 'writes acknowledged before the kill');
    const before = acked.endpoints.length + acked.licenses.length;
    signalNode(node, 'SIGKILL');
    await until('node gone', async () => {
      try {
        await fetch(node.url, { signal: AbortSignal.timeout(500) });
        return false;
      } catch {
        return true;
      }
    }, 30_000, 250);
    await until('the writers meet the dead node', () => writers.counts.unavailable >= 4, 30_000);
    report.killedWriters = await writers.stop();
    report.ackedBeforeKill = before;

    expect((await app.anon.get('/health/ready')).status).to.equal(503);
    expect((await app.anon.get('/health/live')).status).to.equal(200);
    // Every kind of operation answers 503 (or its own refusal before the store is asked).
    const probes = [
      () => admin.get(`/endpoint/${acked.endpoints[0]}`),
      () => admin.post('/endpoint/page-search', { criteria: { orgId: org } }),
      () => admin.post(`/endpoint/${acked.endpoints[1]}/connect`),
      () => admin.put(`/license/${acked.licenses[0] ?? uid('lic')}`, { type: 'DCI', orgId: org }),
      () => admin.post('/utm-endpoint/count', {}),
      () => app.admin.get('/device-migration/utm-devices'),
    ];
    (await Promise.all(probes.map((probe) => timed(probe)))).forEach((o, i) => expectUnavailable(o, `probe ${i}`));

    // Many failing requests of every kind: the heap stays roughly where it was.
    const kinds = [
      () => admin.post('/endpoint/page-search', { criteria: { orgId: org } }),
      () => admin.get(`/endpoint/${acked.endpoints[2]}`),
      () => admin.post(`/endpoint/${acked.endpoints[3]}/disconnect`),
      () => admin.put(`/license/${uid('lic')}`, { type: 'ATC', orgId: org }),
    ];
    const failing = async (i: number): Promise<void> => expectUnavailable(await timed(kinds[i % kinds.length]), `failing request ${i}`);
    await Promise.all(Array.from({ length: 50 }, (_, i) => failing(i)));
    const heapBefore = heapAfterGc();
    const rounds = 4;
    for (let round = 0; round < rounds; round++) await Promise.all(Array.from({ length: 50 }, (_, i) => failing(i)));
    const heapAfter = heapAfterGc();
    report.failingRequests = 50 + rounds * 50;
    report.heapGrowthKiB = Math.round((heapAfter - heapBefore) / 1024);
    expect(heapAfter - heapBefore, `heap growth over ${rounds * 50} failing requests`).to.be.lessThan(16 * 1024 * 1024);
  });

  it('the node starts again on the same port and data: requests succeed without restarting the service; every acknowledged write is there', async () => {
    const restart = Date.now();
    node = await startLocalNode({ name: NODE, port, heap: '384m', log: (l) => process.stderr.write(`  [es-outage] ${l}\n`) });
    expect(node.started).to.equal(true);
    expect(node.url).to.equal(`http://127.0.0.1:${port}`);
    await until('ready after restart', async () => (await app.anon.get('/health/ready')).status === 200, 180_000, 250);
    report.restartToReadyMs = Date.now() - restart;

    // Ready means the service's indices are recovered: reads answer at once, none 503.
    const missing: string[] = [];
    for (const id of acked.endpoints) {
      const ep = await admin.get(`/endpoint/${id}`);
      if (ep.status !== 200) missing.push(`endpoint ${id}: ${ep.status}`);
    }
    for (const id of acked.licenses) {
      const lic = await admin.get(`/license/${id}`);
      if (lic.status !== 200) missing.push(`license ${id}: ${lic.status}`);
    }
    for (const id of acked.connected) {
      const ep = await admin.get<{ connectionStatus: string }>(`/endpoint/${id}`);
      if (ep.body.connectionStatus !== 'CONNECTED') missing.push(`connect of ${id}: ${ep.status} ${ep.body.connectionStatus}`);
    }
    report.ackedChecked = { endpoints: acked.endpoints.length, licenses: acked.licenses.length, connects: acked.connected.length, missing: missing.length };
    expect(missing).to.deep.equal([]);
    expect(acked.endpoints.length + acked.licenses.length).to.be.greaterThan(40);

    // The service writes again.
    const after = await admin.post<{ id: string }>('/endpoint', { orgId: org, displayName: uid('after') });
    expect(after.status, after.text).to.equal(200);
    const page = await admin.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId: org }, pageRequest: { size: 1 } });
    expect(page.status).to.equal(200);
    expect(page.body.totalCount).to.be.at.least(acked.endpoints.length + 1);
  });
});
