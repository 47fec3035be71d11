/** Start and stop: the HTTP server, the store client, index set-up, graceful shutdown. */
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { createApp, type AppHandle } from './app.js';
import { discoverIdentityProvider, type IdentityProvider } from './http/sso.js';
import { createClient, storeAccessFailure, type RefreshPolicy, type StoreContext, type StoreSecurity } from './store/client.js';
import { ensureIndices } from './store/index-setup.js';
import { SchemaKeeper } from './store/schema.js';
import { backgroundTasks, onIndicesReady } from './container.js';
import { Lifecycle, taskOf } from './lifecycle.js';
import { assertStartableConfig, warnOpenOperations } from './start-checks.js';
import { startTracing, type Tracing } from './tracing.js';
import { SERVICE_VERSION } from './version.js';

/** The listening socket's accept queue (see its use). */
const LISTEN_BACKLOG = 8192;

export interface RunningServer {
  url: string;
  port: number;
  handle: AppHandle;
  store: StoreContext;
  /** Keeps the store at this release's schema versions while it runs (docs/adr/0095-schema-versions-rolling-upgrades.md). */
  schema: SchemaKeeper;
  /**
   * Resolves once the indices are set up (or the server is closed first); until then operations
   * answer 503. Rejects with a StoreAccessError when the cluster refuses the service for good
   * (credentials, privileges, TLS trust): the caller stops the process.
   */
  ready: Promise<void>;
  /** Stops accepting, finishes in-flight requests, closes the store client. */
  close(): Promise<void>;
  /** OpenTelemetry traces (a no-op while off). */
  tracing: Tracing;
}

export interface StartOptions {
  config: Config;
  log: Logger;
  elasticsearchUrl: string;
  refresh?: RefreshPolicy;
}

/** Applies templates and aliases, retrying while the store is unreachable; fails at once for a permanent cause. */
async function prepareIndices(
  store: StoreContext,
  handle: AppHandle,
  log: Logger,
  security: StoreSecurity,
  stopped: () => boolean,
  schema: SchemaKeeper,
): Promise<void> {
  for (let attempt = 1; !stopped(); attempt++) {
    try {
      schema.started(await ensureIndices(store, log));
      await onIndicesReady(handle.services, log);
      handle.setIndicesReady(true);
      return;
    } catch (err) {
      const permanent = storeAccessFailure(err, security);
      if (permanent) throw permanent;
      log.warn({ err: { message: (err as Error).message }, attempt }, 'index set-up failed; retrying in 2 s');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const { config, log } = opts;
  assertStartableConfig(config);
  // Before the store client: its instrumentation takes its tracer from the provider registered here.
  const tracing = await startTracing(config.tracing, SERVICE_VERSION, log);
  const store: StoreContext = {
    client: createClient(opts.elasticsearchUrl, config.storeTimeoutMs, config.elasticsearchSecurity, config.tracing.enabled),
    prefix: config.indexPrefix,
    layout: config.indexLayout,
    refresh: opts.refresh ?? 'shared',
  };
  // Single sign-on: the identity provider must answer its discovery document before the service serves.
  let idp: IdentityProvider | undefined;
  try {
    idp = config.oidc && config.publicUrl ? await discoverIdentityProvider(config.oidc, config.publicUrl, log) : undefined;
  } catch (err) {
    await store.client.close();
    throw err;
  }
  const handle = createApp({ config, store, log, idp });
  warnOpenOperations(handle.routes, config, log);
  let stopped = false;

  const schema = new SchemaKeeper(store, log, config.maintenance.schemaCheckSeconds * 1000, `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`);
  // Background work, once the indices exist: the schema check first, then the container's tasks; stopped in reverse.
  const background = new Lifecycle([taskOf('schema check', schema), ...backgroundTasks(handle.services)]);
  const ready = prepareIndices(store, handle, log, config.elasticsearchSecurity, () => stopped, schema);
  void ready.then(() => {
    if (stopped) return;
    background.start();
  }, () => undefined);
  // Serve only once indices exist when the store answers at start; otherwise serve (503s) and keep trying.
  let headStart: NodeJS.Timeout | undefined;
  try {
    await Promise.race([ready, new Promise((r) => (headStart = setTimeout(r, 15_000)))]);
  } catch (err) {
    stopped = true;
    await store.client.close();
    await handle.services.deviceMigration.close();
    await tracing.shutdown();
    throw err;
  } finally {
    clearTimeout(headStart);
  }

  // Node checks these time-outs every connectionsCheckingInterval (30 s by default): checked every
  // second, a client that dribbles its headers or body is cut off close to the time-out.
  // Koa's handler answers its own errors (ctx.onerror): its promise never rejects, nothing to await.
  // The door (src/http/door.ts) answers an overloaded reading lane's requests before Koa reads them.
  const handleRequest = handle.app.callback();
  const atDoor = handle.door;
  const server = http.createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
    if (!atDoor(req, res)) void handleRequest(req, res);
  });
  server.requestTimeout = config.requestTimeoutMs + 5000;
  server.headersTimeout = Math.min(config.headersTimeoutMs, server.requestTimeout);
  server.keepAliveTimeout = 65_000;
  // The agent channel's WebSocket (the one place the server's upgrades are taken).
  server.on('upgrade', handle.upgrade);
  // The accept queue takes a reconnect storm (thousands of agents within a second) while the event
  // loop is busy admitting them: Node's default of 511 overflows, and the kernel then drops
  // handshakes that the agents' TCP stacks retry only after 1, 3, 7, 15… s. The kernel caps it
  // at net.core.somaxconn (docs/adr/0129).
  await new Promise<void>((resolve) => server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, resolve));
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  log.info({ url, elasticsearch: opts.elasticsearchUrl, prefix: config.indexPrefix, node: process.version }, 'endpoint control service listening');

  return {
    url,
    port,
    handle,
    // The services' context: writes through it carry the ancestry of org-scoped records (tools and tests).
    store: handle.services.storeContext,
    schema,
    ready,
    close: async () => {
      stopped = true;
      await background.stop();
      // Stop accepting; keep-alive sockets close as soon as their in-flight request is answered.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearInterval(sweeper);
      // Audit events handed over without waiting (refusals) reach the store before it closes.
      await handle.services.audit.drain();
      // Changes saved but not yet announced get a last chance (the outbox is in memory only).
      await handle.services.changeFeed.drain(5000);
      handle.services.changeFeed.stop();
      await store.client.close();
      // The device-migration database (pool or embedded PGlite and its lock file), when it was opened.
      await handle.services.deviceMigration.close();
      // The spans of the last requests are sent before the process goes.
      await tracing.shutdown();
    },
    tracing,
  };
}
