/**
 * A real OTLP/HTTP traces receiver on a loopback port, as a collector's `otlp` receiver listens
 * on 4318: it takes `POST /v1/traces` in both encodings the protocol defines — protobuf
 * (`application/x-protobuf`, decoded with the protocol's own message definitions below) and
 * JSON (`application/json`, OTLP's JSON mapping: hex ids, camelCase fields) — and keeps every
 * span, flattened, for the tests to assert on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import protobuf from 'protobufjs';

/**
 * The messages of opentelemetry-proto (collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto) the receiver decodes, with their field numbers.
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
  message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const REQUEST = protobuf.parse(OTLP_PROTO, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest');

/** OTLP span kinds. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const STATUS_ERROR = 2;

type Scalar = string | number | boolean;

/** One received span, flattened with its resource and scope. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, Scalar>;
  links: { traceId: string; spanId: string }[];
  statusCode: number;
  resource: Record<string, Scalar>;
  scope: string;
  /** The encoding it arrived in. */
  encoding: 'protobuf' | 'json';
}

/** The JSON shape shared by both decodings (protobufjs toObject with hex-able bytes, or OTLP/JSON). */
interface AnyValueJson {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface KeyValueJson {
  key: string;
  value?: AnyValueJson;
}
interface SpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValueJson[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface RequestJson {
  resourceSpans?: {
    resource?: { attributes?: KeyValueJson[] };
    scopeSpans?: { scope?: { name?: string }; spans?: SpanJson[] }[];
  }[];
}

function scalar(v: AnyValueJson | undefined): Scalar {
  if (!v) return '';
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return '';
}

function attributes(kvs: KeyValueJson[] | undefined): Record<string, Scalar> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, scalar(kv.value)]));
}

function flatten(req: RequestJson, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: attributes(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          statusCode: s.status?.code ?? 0,
          resource,
          scope: ss.scope?.name ?? '',
          encoding,
        });
      }
    }
  }
  return out;
}

function decode(body: Buffer, contentType: string): ReceivedSpan[] {
  if (contentType.startsWith('application/json'))
    return flatten(JSON.parse(body.toString('utf8')) as RequestJson, 'json');
  if (!contentType.startsWith('application/x-protobuf')) throw new Error(`unexpected content type ${contentType}`);
  // Bytes as hex, as OTLP/JSON writes trace and span ids; 64-bit integers as strings.
  const obj = REQUEST.toObject(REQUEST.decode(body), { longs: String, enums: Number, bytes: String, defaults: false });
  const hex = (b64: unknown): string =>
    typeof b64 === 'string' && b64 !== '' ? Buffer.from(b64, 'base64').toString('hex') : '';
  const req = obj as RequestJson;
  for (const rs of req.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        s.parentSpanId = hex(s.parentSpanId);
        for (const l of s.links ?? []) {
          l.traceId = hex(l.traceId);
          l.spanId = hex(l.spanId);
        }
      }
    }
  }
  return flatten(req, 'protobuf');
}

export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received, by content type. */
  requests: string[];
  /** Requests it could not decode (a test fails on any). */
  errors: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const errors: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
        requests.push(type);
        spans.push(...decode(body, type));
        // An empty ExportTraceServiceResponse: full success.
        res.writeHead(200, {
          'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf',
        });
        res.end(type.startsWith('application/json') ? '{}' : '');
      } catch (err) {
        errors.push((err as Error).message);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
