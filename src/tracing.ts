/**
 * OpenTelemetry traces (docs/adr/0090-opentelemetry-traces.md): off by default, switched on
 * and configured by the standard OTEL_* variables (src/config.ts). While on, one tracer
 * provider is registered process-wide, because the Elasticsearch client's own instrumentation
 * (@elastic/transport) reaches it through the global API; every layer uses the helpers here,
 * which cost one boolean test while tracing is off. This file starts and stops the SDK (loaded
 * from ./tracing-sdk.ts only when tracing is on); the context API the layers use is
 * ./trace-context.ts.
 */
import type { TracingConfig } from './config-tracing.js';
import type { Logger } from './log.js';
import { setTracingActive, tracingActive } from './trace-context.js';

export interface Tracing {
  /** Sends every finished span now. */
  flush(): Promise<void>;
  /** Sends what is left and unregisters the provider. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { flush: async () => undefined, shutdown: async () => undefined };

/**
 * Registers the process's tracer provider when the configuration turns tracing on (before the
 * Elasticsearch client is made, so its instrumentation finds it); answers a no-op otherwise.
 */
export async function startTracing(cfg: TracingConfig, serviceVersion: string, log: Logger): Promise<Tracing> {
  if (!cfg.enabled) return OFF;
  if (tracingActive()) throw new Error('tracing is already started in this process');
  const { startSdk } = await import('./tracing-sdk.js');
  const sdk = startSdk(cfg, serviceVersion, log);
  // The flag the layers test lives in this module graph, whatever graph the SDK's module loads in.
  setTracingActive(true);
  return {
    flush: () => sdk.flush(),
    shutdown: async () => {
      setTracingActive(false);
      await sdk.shutdown();
    },
  };
}
