/** Start and stop: the HTTP server, the store client, index set-up, graceful shutdown. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { createApp, type AppHandle } from './app.js';
import { createClient, type RefreshPolicy, type StoreContext } from './store/client.js';
import { ensureIndices } from './store/indices.js';
import { onIndicesReady } from './resources/index.js';

export interface RunningServer {
  url: string;
  port: number;
  handle: AppHandle;
  store: StoreContext;
  /** Settles once the indices are set up (or the server is closed first); until then operations answer 503. */
  ready: Promise<void>;
  /** Stops accepting, finishes in-flight requests, closes the store client. */
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  log: Logger;
  elasticsearchUrl: string;
  refresh?: RefreshPolicy;
}

/** Applies templates and aliases, retrying while the store is unreachable. */
async function prepareIndices(store: StoreContext, handle: AppHandle, log: Logger, stopped: () => boolean): Promise<void> {
  for (let attempt = 1; !stopped(); attempt++) {
    try {
      await ensureIndices(store, log);
      await onIndicesReady(handle.services, log);
      handle.setIndicesReady(true);
      return;
    } catch (err) {
      log.warn({ err: { message: (err as Error).message }, attempt }, 'index set-up failed; retrying in 2 s');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const { config, log } = opts;
  const store: StoreContext = {
    client: createClient(opts.elasticsearchUrl, config.storeTimeoutMs),
    prefix: config.indexPrefix,
    refresh: opts.refresh ?? 'shared',
  };
  const handle = createApp({ config, store, log });
  let stopped = false;
  const ready = prepareIndices(store, handle, log, () => stopped);
  // Serve only once indices exist when the store answers at start; otherwise serve (503s) and keep trying.
  await Promise.race([ready, new Promise((r) => setTimeout(r, 15_000))]);

  // Node checks these time-outs every connectionsCheckingInterval (30 s by default): checked every
  // second, a client that dribbles its headers or body is cut off close to the time-out.
  const server = http.createServer({ connectionsCheckingInterval: 1000 }, handle.app.callback());
  server.requestTimeout = config.requestTimeoutMs + 5000;
  server.headersTimeout = Math.min(config.headersTimeoutMs, server.requestTimeout);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  log.info({ url, elasticsearch: opts.elasticsearchUrl, prefix: config.indexPrefix }, 'endpoint control service listening');

  return {
    url,
    port,
    handle,
    store,
    ready,
    close: async () => {
      stopped = true;
      // Stop accepting; keep-alive sockets close as soon as their in-flight request is answered.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearInterval(sweeper);
      await store.client.close();
      // The device-migration database (pool or embedded PGlite and its lock file), when it was opened.
      await handle.services.deviceMigration.close();
    },
  };
}
