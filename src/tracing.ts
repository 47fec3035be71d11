/**
 * OpenTelemetry traces (docs/adr/0090-opentelemetry-traces.md): off by default, switched on
 * and configured by the standard OTEL_* variables (src/config.ts). While on, one tracer
 * provider is registered process-wide, because the Elasticsearch client's own instrumentation
 * (@elastic/transport) reaches it through the global API; every layer uses the helpers here,
 * which cost one boolean test while tracing is off.
 */
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
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
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from './config.js';
import type { Logger } from './log.js';

const TRACER_NAME = 'endpoint-control-service';

/** True while a provider of this process is registered. */
let active = false;

/** Whether spans are being made (the hot paths skip all tracing work when not). */
export function tracingActive(): boolean {
  return active;
}

export interface Tracing {
  /** Sends every finished span now. */
  flush(): Promise<void>;
  /** Sends what is left and unregisters the provider. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { flush: async () => undefined, shutdown: async () => undefined };

function samplerOf(cfg: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(cfg.samplerRatio);
  switch (cfg.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function exporterOf(cfg: TracingConfig): SpanExporter {
  // Headers, time-out and compression still come from OTEL_EXPORTER_OTLP_* as the exporter reads them.
  return cfg.protocol === 'http/json' ? new JsonExporter({ url: cfg.url }) : new ProtobufExporter({ url: cfg.url });
}

/**
 * Registers the process's tracer provider when the configuration turns tracing on (before the
 * Elasticsearch client is made, so its instrumentation finds it); answers a no-op otherwise.
 */
export function startTracing(cfg: TracingConfig, serviceVersion: string, log: Logger): Tracing {
  if (!cfg.enabled) return OFF;
  if (active) throw new Error('tracing is already started in this process');
  diag.setLogger(
    {
      error: (message: string) => log.warn({ otel: message }, 'opentelemetry'),
      warn: (message: string) => log.warn({ otel: message }, 'opentelemetry'),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      ...cfg.resourceAttributes,
      [ATTR_SERVICE_NAME]: cfg.serviceName,
      [ATTR_SERVICE_VERSION]: serviceVersion,
    }),
    sampler: samplerOf(cfg),
    spanProcessors: [new BatchSpanProcessor(exporterOf(cfg), { scheduledDelayMillis: cfg.exportDelayMs })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  active = true;
  log.info(
    { exportTo: cfg.url, protocol: cfg.protocol, sampler: cfg.sampler, ratio: cfg.samplerRatio },
    'opentelemetry traces on',
  );
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      active = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
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
