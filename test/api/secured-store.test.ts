/**
 * The service against a secured cluster: its own node with security and HTTP TLS on (a throwaway
 * CA, a file-realm user), reached with basic credentials and a CA file or fingerprint; clear,
 * immediate start-up failures for wrong credentials and an untrusted certificate; the API key
 * header; a node list whose first node is dead.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { freePort, nodeInstanceDir, stopLocalNode } from '../../src/dev/local-elasticsearch.js';
import { startSecureNode, type SecureNode } from '../../src/dev/secure-node.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';
import { StoreAccessError } from '../../src/store/client.js';

const NODE = 'secured';

interface EndpointRecord {
  id: string;
  orgId: string;
  displayName: string;
  version: number;
}
interface Page<T> {
  totalCount: number;
  items: T[];
}

/** Starts the server with this environment and expects start-up to fail; returns the error and how long it took. */
async function failedStart(env: Record<string, string>, url: string): Promise<{ err: unknown; ms: number }> {
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ECS_INDEX_PREFIX: `${RUN_PREFIX}-sec-fail`,
    DATABASE_URL: 'pglite:memory',
    ECS_DEVELOPMENT: 'true',
    ...env,
  });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const started = Date.now();
  try {
    const server = await startServer({ config, log: createLogger('silent', sink), elasticsearchUrl: url });
    await server.close();
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
  throw new Error('start-up succeeded; expected it to fail');
}

describe('secured store: security and TLS on, credentials and CA from the environment', function () {
  this.timeout(600_000);
  let node: SecureNode;
  let credentials: Record<string, string>;

  // A node left by an interrupted run is not reused, and no run's indices outlive it.
  const wipeData = (): void => fs.rmSync(path.join(nodeInstanceDir(NODE), 'data'), { recursive: true, force: true });

  before(async () => {
    await stopLocalNode(NODE);
    wipeData();
    node = await startSecureNode({
      name: NODE,
      port: await freePort(),
      heap: '384m',
      log: (l) => process.stderr.write(`  [es-secured] ${l}\n`),
    });
    credentials = { ELASTICSEARCH_USERNAME: node.username, ELASTICSEARCH_PASSWORD: node.password };
  });

  after(async () => {
    await stopLocalNode(NODE);
    wipeData();
  });

  it('the node refuses anonymous requests and plain HTTP (the tests below really run against a secured node)', async () => {
    const { port } = new URL(node.url);
    const plain = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).to.not.equal(200);
    // Node's fetch does not trust the throwaway CA either: TLS refuses before any HTTP status.
    const anonymous = await fetch(`${node.url}/`).then(
      (r) => r.status,
      (e: Error) => (e.cause as Error | undefined)?.message ?? e.message,
    );
    expect(String(anonymous)).to.match(/certificate/);
  });

  describe('basic credentials + ELASTICSEARCH_CA_FILE', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(
        { ECS_INDEX_PREFIX: `${RUN_PREFIX}-sec`, ...credentials, ELASTICSEARCH_CA_FILE: node.caFile },
        { elasticsearchUrl: node.url },
      );
    });
    after(() => t?.close());

    it('is ready, and answers the API: organizations, tokens, endpoint CRUD, page-search, inventory report and counts', async () => {
      expect((await t.anon.get('/health/ready')).status).to.equal(200);
      const { orgA, childA, adminA } = await t.world.tenants();

      // An endpoint of the child organization, seen by the parent's admin through the organization
      // tree, which the service loads with a point in time (organizations store: allLinks).
      const created = await adminA.post<EndpointRecord>('/endpoint', { orgId: childA, displayName: uid('secured') });
      expect(created.status, created.text).to.equal(200);
      const id = created.body.id;
      const got = await adminA.get<EndpointRecord>(`/endpoint/${id}`);
      expect(got.status).to.equal(200);
      expect(got.body.displayName).to.equal(created.body.displayName);

      const updated = await adminA.put<EndpointRecord>(`/endpoint/${id}`, {
        orgId: childA,
        displayName: 'renamed',
        version: got.body.version,
      });
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.displayName).to.equal('renamed');

      const page = await adminA.post<Page<EndpointRecord>>('/endpoint/page-search', {
        criteria: { basic: 'renamed', orgId: childA },
      });
      expect(page.status, page.text).to.equal(200);
      expect(page.body.items.map((e) => e.id)).to.deep.equal([id]);

      // Software inventory: the full report is one bulk; the summary is an aggregation.
      const report = await adminA.post(`/endpoint/${id}/software-inventory`, [
        { name: 'Firefox', version: '120.0' },
        { name: 'Zoom', version: '5.17' },
      ]);
      expect(report.status, report.text).to.equal(201);
      const summary = await adminA.get<{ name: string; version: string; count: number }[]>(
        `/org/${childA}/software-inventory-summary`,
      );
      expect(summary.status, summary.text).to.equal(200);
      expect(summary.body).to.deep.equal([
        { name: 'Firefox', version: '120.0', count: 1 },
        { name: 'Zoom', version: '5.17', count: 1 },
      ]);
      expect((await adminA.get<unknown[]>(`/org/${orgA}/software-inventory-summary`)).body).to.deep.equal([]);

      expect((await adminA.delete(`/endpoint/${id}`)).status).to.equal(204);
      expectErrorBody(await adminA.get(`/endpoint/${id}`), 404);
    });
  });

  it('trusts the node by ELASTICSEARCH_CA_FINGERPRINT instead of a CA file', async () => {
    const t = await startTestApp(
      { ECS_INDEX_PREFIX: `${RUN_PREFIX}-sec`, ...credentials, ELASTICSEARCH_CA_FINGERPRINT: node.caFingerprint },
      { elasticsearchUrl: node.url },
    );
    try {
      const org = await t.world.org();
      const created = await t.world.endpoint(org);
      expect((await t.admin.get<EndpointRecord>(`/endpoint/${created.id}`)).body.orgId).to.equal(org);
    } finally {
      await t.close();
    }
  });

  it('a wrong fingerprint fails start-up at once, naming ELASTICSEARCH_CA_FINGERPRINT', async () => {
    const wrong = node.caFingerprint.replace(/^../, node.caFingerprint.startsWith('00') ? '11' : '00');
    const { err, ms } = await failedStart({ ...credentials, ELASTICSEARCH_CA_FINGERPRINT: wrong }, node.url);
    expect(err).to.be.instanceOf(StoreAccessError);
    expect((err as Error).message).to.match(/not trusted.*fingerprint does not match.*ELASTICSEARCH_CA_FINGERPRINT/i);
    expect(ms).to.be.lessThan(10_000);
  });

  it('a wrong password fails start-up at once (no 503 retry loop), naming the 401 and the variables to fix', async () => {
    const { err, ms } = await failedStart(
      {
        ELASTICSEARCH_USERNAME: node.username,
        ELASTICSEARCH_PASSWORD: 'wrong-password',
        ELASTICSEARCH_CA_FILE: node.caFile,
      },
      node.url,
    );
    expect(err).to.be.instanceOf(StoreAccessError);
    expect((err as Error).message).to.match(
      /rejected the credentials \(401: unable to authenticate user.*\); fix ELASTICSEARCH_USERNAME \/ ELASTICSEARCH_PASSWORD/,
    );
    expect(ms).to.be.lessThan(10_000);
  });

  it('no credentials: start-up fails naming the 401 and the variables to set', async () => {
    const { err } = await failedStart({ ELASTICSEARCH_CA_FILE: node.caFile }, node.url);
    expect(err).to.be.instanceOf(StoreAccessError);
    expect((err as Error).message).to.match(
      /requires authentication \(401.*set ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME \+ ELASTICSEARCH_PASSWORD/,
    );
  });

  it('no CA configured (the certificate is untrusted): start-up fails at once, naming the cause and ELASTICSEARCH_CA_FILE', async () => {
    const { err, ms } = await failedStart(credentials, node.url);
    expect(err).to.be.instanceOf(StoreAccessError);
    expect((err as Error).message).to.match(
      /certificate is not trusted \(.*certificate.*\); set ELASTICSEARCH_CA_FILE/,
    );
    expect(ms).to.be.lessThan(10_000);
  });

  it('the process: one fatal log line naming the cause, exit code 1', async function () {
    this.timeout(120_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        ELASTICSEARCH_URL: node.url,
        ELASTICSEARCH_USERNAME: node.username,
        ELASTICSEARCH_PASSWORD: 'wrong-password',
        ELASTICSEARCH_CA_FILE: node.caFile,
        PORT: '0',
        HOST: '127.0.0.1',
        ECS_INDEX_PREFIX: `${RUN_PREFIX}-sec-proc`,
        DATABASE_URL: 'pglite:memory',
        ECS_DEVELOPMENT: 'true',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let errOut = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errOut += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, out + errOut).to.equal(1);
    const fatal = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 60);
    expect(fatal.map((l) => l.msg)).to.have.length(1);
    expect(fatal[0].msg).to.match(
      /^cannot use Elasticsearch: Elasticsearch rejected the credentials \(401.*fix ELASTICSEARCH_USERNAME \/ ELASTICSEARCH_PASSWORD/,
    );
    expect(out + errOut, 'no stack trace').to.not.match(/\n\s+at /);
    expect(out, 'never listened').to.not.include('endpoint control service listening');
  });

  it('several URLs: a list whose first node is dead (closed port) still works', async () => {
    const dead = `https://127.0.0.1:${await freePort()}`;
    const t = await startTestApp(
      { ECS_INDEX_PREFIX: `${RUN_PREFIX}-sec`, ...credentials, ELASTICSEARCH_CA_FILE: node.caFile },
      { elasticsearchUrl: `${dead},${node.url}` },
    );
    try {
      expect((await t.anon.get('/health/ready')).status).to.equal(200);
      const org = await t.world.org();
      for (let i = 0; i < 5; i++) {
        const e = await t.world.endpoint(org);
        expect((await t.admin.get(`/endpoint/${e.id}`)).status).to.equal(200);
      }
      // Both nodes are in the client's list; the dead one was tried, marked dead and left out.
      const pool = t.server.store.client.connectionPool.connections.map((c) => ({ url: c.url.origin, status: c.status }));
      expect(pool).to.deep.equal([
        { url: dead, status: 'dead' },
        { url: node.url, status: 'alive' },
      ]);
    } finally {
      await t.close();
    }
  });

  it('ELASTICSEARCH_API_KEY is sent as `Authorization: ApiKey <key>` (and a 401 names the variable)', async () => {
    const seen: (string | undefined)[] = [];
    const fake = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(
        JSON.stringify({
          error: { type: 'security_exception', reason: 'unable to authenticate with provided credentials' },
          status: 401,
        }),
      );
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const key = 'VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==';
      const { err } = await failedStart(
        { ELASTICSEARCH_API_KEY: key },
        `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
      );
      expect(seen[0]).to.equal(`ApiKey ${key}`);
      expect(err).to.be.instanceOf(StoreAccessError);
      expect((err as Error).message).to.match(/rejected the credentials \(401.*\); fix ELASTICSEARCH_API_KEY$/);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });
});
