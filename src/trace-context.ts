/**
 * The trace context API (docs/adr/0090-opentelemetry-traces.md): what log lines, the request
 * middleware, the batcher and the job runner use to read and continue the active trace. Only
 * @opentelemetry/api and the W3C propagator; the SDK that makes spans real is started by
 * ./tracing.ts. Each helper costs one boolean test while tracing is off.
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const TRACER_NAME = 'endpoint-control-service';

/** True while a provider of this process is registered. */
let active = false;

/** Whether spans are being made (the hot paths skip all tracing work when not). */
export function tracingActive(): boolean {
  return active;
}

/** Set by the SDK start-up (./tracing.ts) when it registers or unregisters the provider. */
export function setTracingActive(on: boolean): void {
  active = on;
}

/** The active span's context, when tracing is on and a span is active. */
export function currentSpanContext(): SpanContext | undefined {
  if (!active) return undefined;
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

/** The trace and span ids of the active span, for log lines and error bodies. */
export function currentTraceIds(): { traceId: string; spanId: string } | undefined {
  const sc = currentSpanContext();
  return sc ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}

const w3c = new W3CTraceContextPropagator();

/** The context a request continues: its W3C `traceparent` (and `tracestate`), else a new trace. */
export function incomingContext(headers: Record<string, string | string[] | undefined>): Context {
  return w3c.extract(ROOT_CONTEXT, headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => carrier[key],
  });
}

/** Starts a request's server span under `parent`; `run` executes with it active. */
export function startServerSpan(
  name: string,
  parent: Context,
  attributes: Attributes,
): { span: Span; context: Context } {
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` inside `ctx` (a request's span context). */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** Marks a span failed (a 5xx, an unexpected error). */
export function markFailed(span: Span, message?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Runs work done on behalf of several requests (a group commit, a coalesced read) or of none
 * (a job's batch) in a span of its own. Carrying one request, the span is that request's child,
 * so its trace stays whole; carrying several, or none, it starts a trace of its own linked to
 * each request it carried.
 */
export async function inBatchSpan<T>(
  name: string,
  carried: readonly (SpanContext | undefined)[],
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!active) return fn(undefined);
  const contexts = carried.filter((c): c is SpanContext => c !== undefined);
  const only = carried.length === 1 ? contexts[0] : undefined;
  const parent = only ? trace.setSpanContext(ROOT_CONTEXT, only) : ROOT_CONTEXT;
  const links: Link[] = only ? [] : contexts.map((c) => ({ context: c }));
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: SpanKind.INTERNAL, attributes, links, root: !only }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    markFailed(span, (err as Error).message);
    throw err;
  } finally {
    span.end();
  }
}
