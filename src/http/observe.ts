/**
 * The outer middleware: request id, per-request logger, one access-log line, Prometheus
 * metrics, and the one error handler that renders every failure as the section-7 body.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError, BadRequestError, InternalError, PayloadTooLargeError, errorBody } from '../errors.js';
import { accessLineOf, type Logger } from '../log.js';
import { isLaneShed } from './admission.js';
import type { ClientAddress } from './client-address.js';
import { currentTraceIds } from '../trace-context.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's `ctx.state`, with its logger made on first use: most requests log only their
 * access line, and a child logger matches the redaction's paths against its bindings when it
 * is made. An accessor on a class keeps the state one shape for every request.
 */
class RequestState {
  [key: string]: unknown;
  private child: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    readonly requestId: string,
    readonly clientAddress: string,
  ) {}
  get log(): Logger {
    return (this.child ??= this.parent.child({ requestId: this.requestId }));
  }
  set log(l: Logger) {
    this.child = l;
  }
}

/** Request id, client address, logger, access log and metrics. */
export function observe(log: Logger, metrics: Metrics, addressOf: ClientAddress): Koa.Middleware {
  const access = accessLineOf(log);
  // prom-client hashes a label object on every call: each method, route and status is labelled
  // once, and its count and histogram reused.
  const labelled = new Map<string, [Counter.Internal, Histogram.Internal<'method' | 'route' | 'status'>]>();
  const metricsOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let m = labelled.get(key);
    if (!m) {
      const labels = { method, route, status: String(status) };
      m = [metrics.requests.labels(labels), metrics.duration.labels(labels)];
      labelled.set(key, m);
    }
    return m;
  };
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.set('x-request-id', requestId);
    const clientAddress = addressOf(ctx.req);
    ctx.state = new RequestState(log, requestId, clientAddress);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = String((ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched');
      const [count, duration] = metricsOf(ctx.method, route, ctx.status);
      count.inc();
      duration.observe(seconds);
      // The caller: its token id and role, once authenticated (also on a 403).
      const caller = ctx.state.principal as { tokenId?: string; role?: string } | undefined;
      access({
        requestId,
        method: ctx.method,
        route,
        path: ctx.path,
        status: ctx.status,
        durationMs: Math.round(seconds * 1e4) / 10,
        clientAddress,
        // Absent before authentication: a field whose value is undefined is left out of the line.
        tokenId: caller?.tokenId,
        role: caller?.role,
      });
    }
  };
}

/**
 * Headers on every answer: `nosniff` everywhere, and `no-store` on everything but the static
 * API documentation (`docsPrefix`), since answers carry tenant data and token minting its
 * secret. Set before the work so error answers carry them too.
 */
export function securityHeaders(docsPrefix: string): Koa.Middleware {
  // Nothing to do after the work: handing on next()'s promise keeps no suspended frame per request in flight (a held agent channel).
  return (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (!ctx.path.startsWith(docsPrefix)) ctx.set('Cache-Control', 'no-store');
    return next();
  };
}

/**
 * Turns an error raised below the HTTP layer into an AppError where it can: the store's
 * translation, handed in by the app (src/app.ts) so this layer imports no store code.
 */
export type ErrorTranslator = (err: unknown) => unknown;

export function asAppError(err: unknown, translate: ErrorTranslator): AppError | undefined {
  const translated = translate(err);
  if (translated instanceof AppError) return translated;
  // co-body / raw-body / http-errors raised while reading the body
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e.status ?? e.statusCode;
  if (status === 413) return new PayloadTooLargeError('request body exceeds the size limit');
  if (status === 400 || status === 415 || status === 422) {
    const detail = e.type === 'entity.parse.failed' || /JSON|Unexpected token/i.test(e.message ?? '') ? 'malformed JSON body' : (e.message ?? 'bad request');
    return new BadRequestError(detail);
  }
  return undefined;
}

/** The only place that turns an error into a response. */
export function errorHandler(translate: ErrorTranslator): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let appErr = asAppError(err, translate);
      if (!appErr) {
        (ctx.state.log as Logger | undefined)?.error({ err }, 'unexpected error');
        appErr = new InternalError();
      } else if (appErr.status >= 500 && !isLaneShed(appErr)) {
        (ctx.state.log as Logger | undefined)?.warn({ err: { message: (err as Error).message, name: (err as Error).name } }, appErr.message);
      }
      ctx.status = appErr.status;
      for (const [k, v] of Object.entries(appErr.headers)) ctx.set(k, v);
      ctx.type = 'application/json';
      // The request id and, while tracing is on, the trace id beside the section-7 fields.
      ctx.body = JSON.stringify(errorBody(appErr, ctx.path, { requestId: ctx.state.requestId as string | undefined, traceId: currentTraceIds()?.traceId }));
    }
  };
}
