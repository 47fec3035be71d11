/** OpenTelemetry's standard variables (docs/adr/0090-opentelemetry-traces.md): validated, then read into TracingConfig. */
import Joi from 'joi';

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export interface TracingConfig {
  /** On when an OTLP endpoint or `OTEL_TRACES_EXPORTER=otlp` is given, unless OTEL_SDK_DISABLED or `OTEL_TRACES_EXPORTER=none`. */
  enabled: boolean;
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  resourceAttributes: Record<string, string>;
  sampler: TraceSampler;
  /** The ratio of the ratio samplers (OTEL_TRACES_SAMPLER_ARG, 0–1). */
  samplerRatio: number;
  /** Longest wait before finished spans are sent (OTEL_BSP_SCHEDULE_DELAY, ms). */
  exportDelayMs: number;
}

const otlpProtocol = Joi.string()
  .valid('http/protobuf', 'http/json')
  .messages({ 'any.only': '{#label} must be http/protobuf or http/json (gRPC is not supported: use the collector\'s OTLP/HTTP port, 4318)' });

/** The OTEL_* variables the service reads, validated like every other setting. */
export const TRACING_ENV = {
  // OpenTelemetry's own variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
  OTEL_SDK_DISABLED: Joi.boolean().default(false),
  OTEL_TRACES_EXPORTER: Joi.string()
    .valid('otlp', 'none')
    .messages({ 'any.only': '"OTEL_TRACES_EXPORTER" must be otlp or none (traces are sent over OTLP/HTTP)' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_SERVICE_NAME: Joi.string().max(255).default('endpoint-control-service'),
  OTEL_RESOURCE_ATTRIBUTES: Joi.string()
    .allow('')
    .pattern(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/)
    .default(''),
  OTEL_TRACES_SAMPLER: Joi.string()
    .valid(...TRACE_SAMPLERS)
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: Joi.number().min(0).max(1).default(1),
  OTEL_BSP_SCHEDULE_DELAY: Joi.number().integer().min(1).max(600_000).default(5000),
};

function decodeResourceAttributes(v: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of v.split(',').filter(Boolean)) {
    const at = pair.indexOf('=');
    out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}

/** The traces URL: the signal's own endpoint as given, else the base endpoint + /v1/traces (the OTLP exporter rule). */
function tracesUrl(v: Record<string, unknown>): string {
  const own = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as string | undefined;
  if (own) return own;
  const base = (v.OTEL_EXPORTER_OTLP_ENDPOINT as string | undefined) ?? 'http://localhost:4318';
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** The tracing settings from the validated environment. */
export function tracingConfig(v: Record<string, unknown>): TracingConfig {
  const exporter = v.OTEL_TRACES_EXPORTER as string | undefined;
  const endpointGiven = v.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
  return {
    enabled: !(v.OTEL_SDK_DISABLED as boolean) && (exporter === 'otlp' || (exporter === undefined && endpointGiven)),
    url: tracesUrl(v),
    protocol: ((v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? v.OTEL_EXPORTER_OTLP_PROTOCOL) as TracingConfig['protocol']),
    serviceName: v.OTEL_SERVICE_NAME as string,
    resourceAttributes: decodeResourceAttributes(v.OTEL_RESOURCE_ATTRIBUTES as string),
    sampler: v.OTEL_TRACES_SAMPLER as TraceSampler,
    samplerRatio: v.OTEL_TRACES_SAMPLER_ARG as number,
    exportDelayMs: v.OTEL_BSP_SCHEDULE_DELAY as number,
  };
}
