/** Builds the Koa app from the route tables. */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import Koa from 'koa';
import compose from 'koa-compose';
import Router from '@koa/router';
import { Gauge } from 'prom-client';
import coBody from 'co-body';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { StoreContext } from './store/client.js';
import { storeAnswers } from './store/client.js';
import { translateStoreError } from './store/errors.js';
import { serviceAliases } from './store/indices.js';
import { MethodNotAllowedError, NotFoundError, ServiceUnavailableError } from './errors.js';
import { errorHandler, observe, createMetrics, securityHeaders, type Metrics } from './http/observe.js';
import { Admission } from './http/admission.js';
import { door, type Door } from './http/door.js';
import { requestTimeout, rateLimiter } from './http/limits.js';
import { API_PREFIX, requestSegment, type RouteSpec } from './http/routes.js';
import { buildRouter } from './http/router.js';
import { buildOpenApi, docsPage } from './http/openapi.js';
import { Idempotency } from './http/idempotency.js';
import { auditTrail } from './http/audit.js';
import { consoleAssets } from './http/console.js';
import { idpRechecker, ssoRouter, type IdentityProvider } from './http/sso.js';
import { withDeepPaging } from './http/deep-paging.js';
import { allRoutes, createServices, type Services } from './container.js';
import { API_VERSION } from './version.js';
import { traceRequests } from './http/tracing.js';
import { clientAddress } from './http/client-address.js';
import { agentChannelUpgrade, type ChannelUpgrade } from './http/agent-channel/websocket.js';

export interface AppHandle {
  app: Koa;
  services: Services;
  routes: RouteSpec[];
  metrics: Metrics;
  openapi: Record<string, unknown>;
  /** Set once templates and aliases are in place. */
  setIndicesReady(ready: boolean): void;
  /** Sheds requests of an overloaded reading lane before the app reads them (src/http/door.ts). */
  door: Door;
  /** The agent channel's WebSocket: the server's one 'upgrade' listener (src/http/agent-channel/websocket.ts). */
  upgrade: ChannelUpgrade['handle'];
}

const require = createRequire(import.meta.url);

function swaggerAssetsDir(): string | undefined {
  try {
    return path.dirname(require.resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}


export function createApp(deps: { config: Config; store: StoreContext; log: Logger; idp?: IdentityProvider }): AppHandle {
  const { config, store, log, idp } = deps;
  const services = createServices({ ...deps, ...(idp ? { sessionRechecker: idpRechecker(idp) } : {}) });
  // Cursors and an /export sibling for every route that declares a deep search.
  const routes = withDeepPaging(allRoutes(services), {
    signingKey: config.installerSigningKey,
    keepAliveSeconds: config.cursorKeepAliveSeconds,
  });
  const metrics = createMetrics();
  // Built on first use: most processes never serve it (docs/adr/0142-what-a-request-does-not-need-is-not-loaded.md).
  let openapi: Record<string, unknown> | undefined;
  const openapiDocument = (): Record<string, unknown> => (openapi ??= buildOpenApi(routes, API_VERSION));
  let indicesReady = false;

  const app = new Koa({ proxy: false });
  app.silent = true;

  const ops = new Router();
  ops.get('/health/live', (ctx) => {
    ctx.body = { status: 'UP' };
  });
  ops.get('/health/ready', async (ctx) => {
    const esUp = await storeAnswers(store.client, serviceAliases(store.prefix));
    const ready = esUp && indicesReady;
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set('Retry-After', '5');
    ctx.body = { status: ready ? 'UP' : 'DOWN', elasticsearch: esUp ? 'UP' : 'DOWN', indices: indicesReady ? 'READY' : 'PENDING' };
  });
  const watcher = services.changeWatcher;
  const feed = services.changeFeed;
  new Gauge({
    name: 'ecs_change_feed_delay_max_seconds',
    help: "Largest delay between a change's writing on another instance and its application here, since the last scrape",
    registers: [metrics.registry],
    collect() {
      this.set(watcher.takeMaxDelay() / 1000);
    },
  });
  new Gauge({
    name: 'ecs_change_feed_unsent',
    help: 'Changes saved by this instance but not yet written to the change feed (re-sent until they are)',
    registers: [metrics.registry],
    collect() {
      this.set(feed.pending);
    },
  });
  const channels = services.agentChannel.registry;
  new Gauge({
    name: 'ecs_agent_channels_held',
    help: 'Agent channels held on this instance, by kind (docs/adr/0113-agent-channel.md)',
    labelNames: ['kind'],
    registers: [metrics.registry],
    collect() {
      const held = { LONG_POLL: 0, WEBSOCKET: 0 };
      for (const ch of channels.all()) held[ch.kind] += 1;
      for (const [kind, n] of Object.entries(held)) this.set({ kind }, n);
    },
  });
  ops.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  ops.get(`${API_PREFIX}/openapi.json`, (ctx) => {
    ctx.body = openapiDocument();
  });
  ops.get(`${API_PREFIX}/docs`, (ctx) => {
    ctx.type = 'text/html';
    ctx.body = docsPage(`${API_PREFIX}/openapi.json`, `${API_PREFIX}/docs/assets`);
  });
  const assets = swaggerAssetsDir();
  ops.get(`${API_PREFIX}/docs/assets/:file`, (ctx) => {
    const file = String(ctx.params.file);
    if (!assets || !/^[\w.-]+\.(js|css|png)$/.test(file) || !fs.existsSync(path.join(assets, file))) {
      throw new NotFoundError(`no asset ${file}`);
    }
    ctx.type = path.extname(file);
    ctx.body = fs.createReadStream(path.join(assets, file));
  });

  const admission = new Admission({
    enabled: config.admission,
    fixedLimits: config.laneLimits,
    maxLimits: config.laneMax,
    queueMs: config.laneQueueMs,
    registry: metrics.registry,
    translate: translateStoreError,
  });
  const api = buildRouter(routes, {
    authenticator: services.authenticator,
    orgs: services.orgs,
    requireTokenEverywhere: config.requireTokenEverywhere,
    limitRate: rateLimiter(config.rateLimitPerMinute),
    idempotency: new Idempotency(services.idempotencyKeys, config.idempotencyKeyTtlSeconds, log),
    admission,
    ...(idp ? { sessions: { service: services.sessions, publicOrigin: new URL(idp.publicUrl).origin } } : {}),
    // co-body alone, the JSON reader koa-body wraps: without koa-body's other parsers and its
    // option schemas, whose modules every process held (docs/adr/0142-what-a-request-does-not-need-is-not-loaded.md).
    parseBody: async (ctx, next) => {
      (ctx.request as { body?: unknown }).body = (await coBody.json(ctx, { limit: config.bodyLimit, strict: true })) as unknown;
      await next();
    },
  });

  const sso = ssoRouter(
    { idp, sessions: services.sessions, audit: services.audit, tokenSignIn: config.consoleTokenSignIn, publicUrl: config.publicUrl },
    log,
  );

  const addressOf = clientAddress(config.trustedProxies);
  const upgrade = agentChannelUpgrade({
    authenticator: services.authenticator,
    tokens: services.tokens,
    orgs: services.orgs,
    admission,
    channels: services.agentChannel,
    log,
    ready: () => indicesReady,
    clientAddress: (req) => addressOf(req),
    translate: translateStoreError,
  });

  // While tracing is on, outermost: every log line, error body and store call of a request runs in its span.
  if (config.tracing.enabled) app.use(traceRequests());
  app.use(observe(log, metrics, clientAddress(config.trustedProxies)));
  app.use(securityHeaders(`${API_PREFIX}/docs`));
  app.use(errorHandler(translateStoreError));
  // Inside the error handler (it sees every operation's final status), outside the router.
  app.use(auditTrail({ routes, audit: services.audit, tokens: services.tokens, registry: metrics.registry, translate: translateStoreError }));
  app.use(requestTimeout(config.requestTimeoutMs));
  // Routers leave unmatched requests at 404/405/501 without a body; they become section-7 errors here.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    if (ctx.status === 405 || ctx.status === 501) {
      const allow = (ctx.response.get('Allow') || '').split(/,\s*/).filter(Boolean);
      throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${ctx.path}`, allow);
    }
    if (ctx.status === 404) throw new NotFoundError(`no operation at ${ctx.method} ${ctx.path}`);
  });
  // Until the indices are set up every operation answers 503: a write before then would land nowhere.
  const assertReady = (): void => {
    if (!indicesReady) throw new ServiceUnavailableError('the service is setting up its indices; retry later');
  };
  const elsewhere = compose([
    consoleAssets(),
    ops.routes() as Koa.Middleware,
    ops.allowedMethods() as Koa.Middleware,
    (_ctx, next) => {
      assertReady();
      return next();
    },
    sso.routes() as Koa.Middleware,
    sso.allowedMethods() as Koa.Middleware,
  ]);
  // A path naming one of the API's resources goes straight to that resource's router; the
  // console, health, metrics, documentation and sign-in routers see every other path
  // (docs/adr/0139-operations-dispatched-by-prefix.md).
  app.use((ctx, next) => {
    const segment = requestSegment(ctx.path);
    const resource = segment === undefined ? undefined : api(segment);
    if (!resource) return elsewhere(ctx, next);
    assertReady();
    return resource(ctx, next);
  });

  return {
    app,
    services,
    routes,
    metrics,
    // Made once per process, not per request: the rule against accessors in literals does not apply.
    // eslint-disable-next-line no-restricted-syntax
    get openapi() {
      return openapiDocument();
    },
    setIndicesReady: (ready) => {
      indicesReady = ready;
    },
    door: door(routes, admission, log),
    upgrade: (req, socket, head) => upgrade.handle(req, socket, head),
  };
}

