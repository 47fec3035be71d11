/**
 * The audit trail's crash guarantee: no write acknowledged to its client lacks its
 * audit event after the service dies. A real service process is loaded with concurrent writes
 * and killed with SIGKILL while requests are in flight; then every write it answered 2xx must
 * have its event (searched through a fresh instance on the same store).
 *
 * The service reaches Elasticsearch through a proxy in this test. To make the crash land in the
 * window that matters — writes done, their audit events not yet durable — the proxy starts
 * holding the audit index's bulk requests once the load runs, the process is killed while some
 * are held, and the held ones are then dropped, never reaching the store (as if the process had
 * died before sending them). A service that answered a write before its event was acknowledged
 * fails here; one that waits for the acknowledgement cannot have answered those writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { P } from '../helpers/http.js';
import { until, waitFor } from '../helpers/wait.js';

const WORKERS = 24;
/** Writes acknowledged before the audit bulks are held (enough to span many group commits). */
const ACKED_BEFORE_HOLD = 200;
/** Audit bulk requests held when the process is killed. */
const HELD_AT_KILL = 2;

interface AuditHoldingProxy {
  url: string;
  /** Audit bulk requests held now. */
  readonly held: number;
  /** From now on, holds every bulk request to the audit index. */
  hold(): void;
  /** Drops the held requests: they never reach the store. */
  drop(): void;
  close(): Promise<void>;
}

/** A pass-through proxy to Elasticsearch that can hold (and then drop) the audit index's bulk requests. */
async function auditHoldingProxy(target: string, auditAlias: string): Promise<AuditHoldingProxy> {
  let holding = false;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (holding && req.method === 'POST' && (req.url ?? '').startsWith(`/${auditAlias}/_bulk`)) {
        held.push(res);
        return;
      }
      // A connection per request: a kept-alive one that Elasticsearch closed would fail the service's call.
      const up = http.request(
        new URL(req.url ?? '/', target),
        { method: req.method, headers: req.headers, agent: false },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return held.length;
    },
    hold() {
      holding = true;
    },
    drop() {
      for (const res of held.splice(0)) res.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('audit trail: crash guarantee', () => {
  const prefix = `${RUN_PREFIX}-zcrash`;
  const token = `crash-admin-${crypto.randomBytes(16).toString('hex')}`;
  let child: ChildProcess | undefined;
  let after: TestApp | undefined;
  let proxy: AuditHoldingProxy | undefined;

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await after?.close();
    await proxy?.close();
  });

  it('SIGKILL mid-load: every write answered 2xx has its audit event', async function () {
    // Two index set-ups (the process's and the checking instance's) on a shared, loaded machine.
    this.timeout(300_000);
    const es = await testElasticsearch();
    proxy = await auditHoldingProxy(es.url, `${prefix}-audit`);
    const store = proxy;
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        ELASTICSEARCH_URL: store.url,
        PORT: '0',
        HOST: '127.0.0.1',
        ECS_INDEX_PREFIX: prefix,
        ECS_ADMIN_TOKEN: token,
        LOG_LEVEL: 'info',
        ECS_DEVELOPMENT: 'true',
        DATABASE_URL: 'pglite:memory',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      proc.once('exit', (code, signal) => resolve(signal ?? code)),
    );
    let head = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout?.on('data', (d: Buffer) => {
        if (head.length > 100_000) return;
        head += d.toString();
        const m = /"url":"(http:\/\/[^"]+)"/.exec(head);
        if (m) resolve(m[1]);
      });
      proc.stderr?.on('data', () => undefined);
      void exited.then((code) => reject(new Error(`exited early with ${code}: ${head}`)));
    });
    await until('the service ready', async () => (await fetch(`${url}/health/ready`)).status === 200, 120_000, 200);

    const headers = (requestId: string): Record<string, string> => ({
      'x-auth-token': token,
      'content-type': 'application/json',
      'x-request-id': requestId,
    });
    const orgId = uid('org');
    const org = await fetch(`${url}${P}/admin/organizations`, {
      method: 'POST',
      headers: headers(uid('setup')),
      body: JSON.stringify({ id: orgId, name: 'crash' }),
    });
    expect(org.status).to.equal(201);

    const acked = new Set<string>();
    let inFlight = 0;
    let inFlightAtKill = -1;
    let failed = 0;
    let killed = false;
    const kill = (): void => {
      if (killed) return;
      killed = true;
      inFlightAtKill = inFlight;
      proc.kill('SIGKILL');
      store.drop();
    };
    const worker = async (): Promise<void> => {
      // Bounded: stops at the kill, or after 20 s whatever happens.
      const deadline = Date.now() + 20_000;
      while (!killed && Date.now() < deadline) {
        const requestId = `crash-${crypto.randomBytes(8).toString('hex')}`;
        inFlight++;
        try {
          const res = await fetch(`${url}${P}/license/${uid('lic')}`, {
            method: 'PUT',
            headers: headers(requestId),
            body: JSON.stringify({ type: 'ATC', orgId }),
          });
          await res.arrayBuffer();
          if (res.status >= 200 && res.status < 300) acked.add(requestId);
          else failed++;
        } catch {
          failed++;
        } finally {
          inFlight--;
        }
        if (acked.size >= ACKED_BEFORE_HOLD) store.hold();
      }
    };
    // Kills once audit bulks are held (writes waiting on their events), bounded in time.
    const killer = async (): Promise<void> => {
      const due = await waitFor(async () => killed || (store.held >= HELD_AT_KILL && inFlight > 0), Boolean, 25_000, 5);
      if (due.met && !killed) kill();
    };
    await Promise.all([...Array.from({ length: WORKERS }, () => worker()), killer()]);
    expect(killed, `the load reached ${acked.size} acknowledged writes`).to.equal(true);
    expect(await exited).to.equal('SIGKILL');
    // The kill landed mid-load: requests were in flight, and they never got an answer.
    expect(inFlightAtKill).to.be.greaterThan(0);
    expect(failed).to.be.greaterThan(0);

    // A fresh instance on the same store: every acknowledged write has its event.
    after = await startTestApp({ ECS_INDEX_PREFIX: prefix });
    // Events are written without a refresh (searchable within a second): make every acknowledged one searchable now.
    await after.server.store.client.indices.refresh({ index: `${prefix}-audit` });
    const found = new Set<string>();
    for (let page = 0; ; page++) {
      const res = await after.admin.post<{
        totalCount: number;
        items: { requestId: string; status: number; kind: string; actor: { tokenId?: string } }[];
      }>('/audit/search-page', { criteria: { operation: 'putLicense' }, pageRequest: { page, size: 1000 } });
      expect(res.status, res.text).to.equal(200);
      for (const e of res.body.items) {
        expect(e).to.include({ kind: 'WRITE' });
        expect(e.actor.tokenId).to.equal('env:ECS_ADMIN_TOKEN');
        found.add(e.requestId);
      }
      if (res.body.items.length < 1000) break;
    }
    const missing = [...acked].filter((r) => !found.has(r));
    expect(missing, `${missing.length} of ${acked.size} acknowledged writes lack their audit event`).to.deep.equal([]);
    expect(acked.size).to.be.at.least(ACKED_BEFORE_HOLD);
  });
});
