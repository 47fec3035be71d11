/**
 * One server span per request (docs/adr/0090-opentelemetry-traces.md), mounted outermost while
 * tracing is on: it continues the caller's W3C `traceparent`, runs the whole chain with the
 * span active (so the Elasticsearch client's spans, the log lines and error bodies find it),
 * and names it by the route template once the router has matched one.
 */
import type Koa from 'koa';
import { Readable } from 'node:stream';
import { incomingContext, markFailed, runInContext, startServerSpan } from '../trace-context.js';

/** Attribute names of the service's own (beside OpenTelemetry's HTTP semantic conventions). */
export const SPAN_ATTRIBUTES = {
  orgId: 'endpoint_control.org_id',
  lane: 'endpoint_control.lane',
  operation: 'endpoint_control.operation',
} as const;

export function traceRequests(): Koa.Middleware {
  return async (ctx, next) => {
    const { span, context } = startServerSpan(ctx.method, incomingContext(ctx.headers), {
      'http.request.method': ctx.method,
      'url.path': ctx.path,
      'url.scheme': ctx.protocol,
    });
    const end = (): void => {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route !== undefined) {
        span.updateName(`${ctx.method} ${String(route)}`);
        span.setAttribute('http.route', String(route));
      }
      span.setAttribute('http.response.status_code', ctx.status);
      const state = ctx.state as {
        clientAddress?: string;
        principal?: { orgId?: string };
        lane?: string;
        operationId?: string;
      };
      if (state.clientAddress !== undefined) span.setAttribute('client.address', state.clientAddress);
      if (state.principal?.orgId !== undefined) span.setAttribute(SPAN_ATTRIBUTES.orgId, state.principal.orgId);
      if (state.lane !== undefined) span.setAttribute(SPAN_ATTRIBUTES.lane, state.lane);
      if (state.operationId !== undefined) span.setAttribute(SPAN_ATTRIBUTES.operation, state.operationId);
      if (ctx.status >= 500) markFailed(span);
      span.end();
    };
    let streaming = false;
    try {
      await runInContext(context, next);
      // A streamed answer (an export) is still reading the store: the span ends with the response.
      streaming = ctx.body instanceof Readable;
    } finally {
      if (streaming) ctx.res.once('close', end);
      else end();
    }
  };
}
