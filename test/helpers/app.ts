/**
 * Starts the real app on port 0 against the run's Elasticsearch, under the run's index
 * prefix, with a bootstrap admin token; `TestWorld` mints organizations and tokens through
 * the admin API so every test calls the service with real tokens.
 */
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { testElasticsearch } from './elasticsearch.js';
import { Api, requestCheckers, responseCheckers } from './http.js';
import { Conformance } from './conformance.js';

/** One index prefix per test run. */
export const RUN_PREFIX = `ecs-t${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
export const ADMIN_TOKEN = `test-admin-${crypto.randomBytes(16).toString('hex')}`;

export interface TestApp {
  server: RunningServer;
  url: string;
  /** Client carrying the bootstrap system token. */
  admin: Api;
  /** Client without a token. */
  anon: Api;
  world: TestWorld;
  /** Log lines written while the app ran (JSON strings). */
  logs: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Another Elasticsearch than the run's (a node the test starts and stops, a delaying proxy). */
  elasticsearchUrl?: string;
}

export async function startTestApp(env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<TestApp> {
  const es = opts.elasticsearchUrl ? { url: opts.elasticsearchUrl } : await testElasticsearch();
  const config: Config = loadConfig({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ECS_INDEX_PREFIX: RUN_PREFIX,
    ECS_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    // A device migration that a test triggers without naming a database (fuzzing every route)
    // must not write into a shared one: an in-memory PGlite per app, gone when it closes.
    DATABASE_URL: 'pglite:memory',
    // Installer URLs signed with the development key (the service refuses it outside development).
    ECS_DEVELOPMENT: 'true',
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (logs.length < 50_000) logs.push(chunk.toString());
      cb();
    },
  });
  const server = await startServer({
    config,
    log: createLogger(config.logLevel, sink, config.logFormat),
    elasticsearchUrl: es.url,
  });
  // A loaded machine may take longer than the server's own 15 s head start to set the indices up.
  await server.ready;
  const conformance = new Conformance(server.handle.openapi);
  responseCheckers.set(server.url, (m, p, status, type, body) => conformance.check(m, p, status, type, body));
  requestCheckers.set(server.url, (req) => conformance.checkRequest(req));
  const admin = new Api(server.url, ADMIN_TOKEN);
  return {
    server,
    url: server.url,
    admin,
    anon: new Api(server.url),
    world: new TestWorld(admin),
    logs,
    close: async () => {
      responseCheckers.delete(server.url);
      requestCheckers.delete(server.url);
      await server.close();
    },
  };
}

let shared: Promise<TestApp> | undefined;

/**
 * The run's one app, for the files that need no configuration of their own: started by the
 * first file that asks (its index set-up runs once per run), closed after the whole run by
 * the root hook (test/setup.ts). Files that use it never close it.
 */
export function sharedApp(): Promise<TestApp> {
  shared ??= startTestApp();
  return shared;
}

/** Closes the shared app if a file started it (the root afterAll hook). */
export async function closeSharedApp(): Promise<void> {
  const app = shared;
  shared = undefined;
  if (app) await (await app).close();
}

/** The app a describe block runs against, with two fresh tenants (TestWorld.tenants). */
export interface TenantFixture extends Tenants {
  t: TestApp;
}

/**
 * Mocha fixture for the calling describe block: a `before` hook fills the returned object
 * with the app and two fresh tenants, so tests read `w.t`, `w.orgA`, `w.adminA`… Without
 * `env` the app is the run's shared one; with it, an app of that configuration of its own,
 * closed after the block.
 */
export function useTenants(env?: Record<string, string>): TenantFixture {
  const fixture = filledBefore<TenantFixture>(async () => {
    const t = env ? await startTestApp(env) : await sharedApp();
    return { t, ...(await t.world.tenants()) };
  });
  if (env) after(() => fixture.t?.close());
  return fixture;
}

/** An object the calling describe block's `before` hook fills with what `build` answers (tests read it after). */
function filledBefore<T extends object>(build: () => Promise<T>): T {
  const fixture = {} as T;
  before(async () => {
    Object.assign(fixture, await build());
  });
  return fixture;
}

/** The shared app with one fresh organization, a child of it, and an admin and a reader client of the organization. */
export interface OrgFixture {
  t: TestApp;
  org: string;
  child: string;
  admin: Api;
  /** Another client of the organization: its own reader token, its own requests. */
  reader: Api;
}

/** Mocha fixture for the calling describe block: an OrgFixture filled in a `before` hook. */
export function useOrg(): OrgFixture {
  return filledBefore(async () => {
    const t = await sharedApp();
    // One after the other, as the files did before: an organization created while another call
    // reloads the organization tree can be missing from this instance's cache until its next poll.
    const org = await t.world.org();
    const child = await t.world.org(org);
    const [admin, reader] = await Promise.all([t.world.token('admin', org), t.world.token('reader', org)]);
    return { t, org, child, admin: t.world.as(admin), reader: t.world.as(reader) };
  });
}

/**
 * Three organization levels and an unrelated one, for hierarchy tests:
 *
 *   msp ─┬─ custA ── siteA1
 *        └─ custB
 *   other (unrelated)
 */
export interface OrgFamily {
  t: TestApp;
  msp: string;
  custA: string;
  custB: string;
  siteA1: string;
  other: string;
}

/** Mocha fixture for the calling describe block: an OrgFamily on the shared app, filled in a `before` hook. */
export function useOrgFamily(): OrgFamily {
  return filledBefore(async () => {
    const t = await sharedApp();
    // Parents before children (see useOrg).
    const msp = await t.world.org();
    const [custA, custB, other] = await Promise.all([t.world.org(msp), t.world.org(msp), t.world.org()]);
    const siteA1 = await t.world.org(custA);
    return { t, msp, custA, custB, siteA1, other };
  });
}

/** Unique ids per call so test files sharing a run never collide. */
export function uid(prefix = 'x'): string {
  return `${prefix}-${crypto.randomBytes(5).toString('hex')}`;
}

export class TestWorld {
  constructor(readonly admin: Api) {}

  /** Registers an organization (below `parentId` when given); returns its id. */
  async org(parentId?: string, id = uid('org')): Promise<string> {
    const res = await this.admin.post('/admin/organizations', { id, name: `Org ${id}`, ...(parentId ? { parentId } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return id;
  }

  /** Mints a token and returns its secret. */
  async token(role: 'system' | 'admin' | 'reader' | 'agent', orgId?: string, endpointId?: string, expiresAt?: string): Promise<string> {
    const res = await this.admin.post<{ token: string }>('/admin/tokens', {
      name: `${role}-${orgId ?? 'global'}`,
      role,
      ...(orgId ? { orgId } : {}),
      ...(endpointId ? { endpointId } : {}),
      ...(expiresAt ? { expiresAt } : {}),
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.token;
  }

  /** Two unrelated tenants: A (with a child org) and B, with admin and reader clients. */
  async tenants(): Promise<Tenants> {
    const [orgA, orgB] = await Promise.all([this.org(), this.org()]);
    const [childA, adminA, readerA, adminB] = await Promise.all([
      this.org(orgA),
      this.token('admin', orgA),
      this.token('reader', orgA),
      this.token('admin', orgB),
    ]);
    return { orgA, childA, orgB, adminA: this.as(adminA), readerA: this.as(readerA), adminB: this.as(adminB) };
  }

  /** A client for the app with the given token. */
  as(token: string | undefined): Api {
    return this.admin.as(token);
  }

  /** GET /endpoint/{id} with the system token: the record (asserting 200). */
  async endpointRecord(id: string): Promise<EndpointRecord> {
    const res = await this.admin.get<EndpointRecord>(`/endpoint/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  /** Creates an agent endpoint (POST /endpoint, system token) in the org; returns the record. */
  async endpoint(orgId: string, fields: Record<string, unknown> = {}): Promise<EndpointRecord> {
    return this.createEndpoint('/endpoint', orgId, { displayName: uid('agent'), ...fields });
  }

  /** Creates a UTM endpoint (POST /utm-endpoint, system token) with a unique serial; returns the record. */
  async utm(orgId: string, fields: Record<string, unknown> = {}): Promise<EndpointRecord> {
    return this.createEndpoint('/utm-endpoint', orgId, { serialId: uid('SN').toUpperCase(), ...fields });
  }

  /** Creates an LTE endpoint (POST /lte-endpoint, system token); returns the record. */
  async lte(orgId: string, fields: Record<string, unknown> = {}): Promise<EndpointRecord> {
    return this.createEndpoint('/lte-endpoint', orgId, fields);
  }

  private async createEndpoint(path: string, orgId: string, fields: Record<string, unknown>): Promise<EndpointRecord> {
    const res = await this.admin.post<EndpointRecord>(path, { orgId, ...fields });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }
}

export interface Tenants {
  orgA: string;
  childA: string;
  orgB: string;
  adminA: Api;
  readerA: Api;
  adminB: Api;
}

/** An endpoint record of any family as the API returns it (spec 2.2). */
export interface EndpointRecord {
  id: string;
  version: number;
  orgId: string;
  type: string;
  connectionStatus?: string;
  deleted: boolean;
  [field: string]: unknown;
}

/** Asserts the spec section-7 error body. */
export function expectErrorBody(res: { status: number; body: unknown }, status: number, path?: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  const b = res.body as Record<string, unknown>;
  // The section-7 fields, and the request id beside them (traceId too while tracing is on).
  const extensions = ['requestId', 'traceId'].filter((k) => k in b);
  expect(b).to.have.all.keys('message', 'status', 'error', 'timestamp', 'exception', 'path', ...extensions);
  expect(b.status).to.equal(status);
  expect(b.message).to.be.a('string').and.not.equal('');
  expect(b.error).to.be.a('string').and.not.equal('');
  expect(b.exception).to.be.a('string').and.not.equal('');
  expect(b.timestamp).to.be.a('number');
  expect(Math.abs(Date.now() - (b.timestamp as number))).to.be.lessThan(60_000);
  if (path) expect(b.path).to.equal(path);
}
