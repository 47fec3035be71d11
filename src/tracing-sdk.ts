/**
 * The OpenTelemetry SDK, its exporters and the process-wide registration, loaded by
 * ./tracing.ts only when tracing is on: a service that does not trace never loads them
 * (docs/adr/0142-what-a-request-does-not-need-is-not-loaded.md).
 */
import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
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
import type { TracingConfig } from './config-tracing.js';
import type { Logger } from './log.js';

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

/** Registers the process's tracer provider (src/tracing.ts loads this module only when tracing is on). */
export function startSdk(cfg: TracingConfig, serviceVersion: string, log: Logger): { flush(): Promise<void>; shutdown(): Promise<void> } {
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
  log.info(
    { exportTo: cfg.url, protocol: cfg.protocol, sampler: cfg.sampler, ratio: cfg.samplerRatio },
    'opentelemetry traces on',
  );
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}
