/**
 * pino, with token-bearing fields, cookies and credentials redacted wherever they appear, and
 * the active trace's ids in every line while tracing is on. Lines are pino's JSON, or the
 * Elastic Common Schema (`ECS_LOG_FORMAT=ecs`, @elastic/ecs-pino-format) that Filebeat and
 * Elastic Agent ship to Kibana unchanged (docs/adr/0091-ecs-logs.md).
 */
import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import { ecsFormat } from '@elastic/ecs-pino-format';
import { currentTraceIds } from './trace-context.js';

export type { Logger };

/** How lines are written: pino's JSON, or the Elastic Common Schema (ECS_LOG_FORMAT). */
export type LogFormat = 'json' | 'ecs';

const SERVICE = 'endpoint-control-service';

/** Headers that carry a credential: the token, a login session's cookie, basic or bearer credentials. */
const SECRET_HEADERS = ['["x-auth-token"]', 'cookie', '["set-cookie"]', 'authorization', '["proxy-authorization"]'];

/**
 * Where a secret may sit in a line: a `token`, `secret` or identity-provider token field, and the credential headers of
 * a request or response logged as `headers`, `req`/`res` (pino's names) or `http.request`/
 * `http.response` (the ECS names the ECS formatter moves them to).
 */
export const REDACTED_PATHS: readonly string[] = [
  'token',
  '*.token',
  'secret',
  '*.secret',
  'cookie',
  '*.cookie',
  // A login session's tokens from the identity provider (src/resources/sessions/model.ts).
  'refreshToken',
  '*.refreshToken',
  'idToken',
  '*.idToken',
  ...['headers', '*.headers', 'req.headers', 'res.headers', 'http.request.headers', 'http.response.headers'].flatMap((at) =>
    SECRET_HEADERS.map((h) => `${at}${h.startsWith('[') ? h : `.${h}`}`),
  ),
];

/** The trace fields of a line: ECS's `trace.id`/`span.id`, or flat `traceId`/`spanId`. */
function traceMixin(format: LogFormat): () => object {
  if (format === 'ecs') {
    return () => {
      const ids = currentTraceIds();
      return ids ? { trace: { id: ids.traceId }, span: { id: ids.spanId } } : {};
    };
  }
  return () => currentTraceIds() ?? {};
}

/**
 * The service's standard output, written in blocks: lines gather up to 4 KB and are written
 * without blocking, at the latest `flushMs` after the first of them, and at once when the process
 * exits (pino flushes its destinations on `exit`). One write a line cost a count a few per cent of
 * its CPU (docs/adr/0136-a-requests-framework-cpu.md); what a killed process (SIGKILL, OOM) loses
 * is at most those last 4 KB.
 */
export function bufferedStdout(flushMs = 500): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: flushMs });
}

/** The fields of the access line, one per request (src/http/observe.ts). */
export interface AccessFields {
  requestId: string;
  method: string;
  route: string;
  path: string;
  status: number;
  durationMs: number;
  clientAddress: string;
  tokenId?: string;
  role?: string;
}

export type AccessLine = (fields: AccessFields) => void;

/** The access line's writer of each logger createLogger made (see accessLineOf). */
const accessLines = new WeakMap<Logger, AccessLine>();

export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = (redact: boolean): LoggerOptions => {
    const common: LoggerOptions = { level, mixin: traceMixin(format), ...(redact ? { redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' } } : {}) };
    // ECS names the service `service.name`; the formatter also moves `err` to `error.*`.
    if (format === 'ecs') return { ...common, ...ecsFormat({ serviceName: SERVICE, convertErr: true, apmIntegration: false }) };
    return { ...common, base: { service: SERVICE }, timestamp: pino.stdTimeFunctions.isoTime };
  };
  const log = pino(options(true), destination);
  // The same stream, so lines of both stay whole and in order.
  const stream = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  const unredacted = options(false);
  accessLines.set(log, accessLine(pino(unredacted, stream), stream, lineFrame(unredacted)));
  return log;
}

/** A line's text around its time and its fields, as pino writes it with these options. */
interface LineFrame {
  head: string;
  mid: string;
  tail: string;
}

const PROBE_TIME = /"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;
const PROBE_FIELD = '"access-probe":0';

/**
 * pino's own line for the access message, split once around its timestamp and its fields: what
 * is around them (level, process, host, service, format version, message) is the same on every
 * line of a logger without bindings.
 */
function lineFrame(options: LoggerOptions): LineFrame | undefined {
  let text = '';
  pino({ ...options, level: 'info', mixin: undefined }, { write: (s: string) => void (text += s) }).info({ 'access-probe': 0 }, 'request');
  const time = PROBE_TIME.exec(text);
  const at = text.indexOf(PROBE_FIELD);
  if (!time || at < time.index) return undefined;
  return { head: text.slice(0, time.index + 1), mid: text.slice(time.index + time[0].length - 1, at), tail: text.slice(at + PROBE_FIELD.length) };
}

/**
 * The access line as pino would write it, built as one string: pino's per-line work (merging,
 * each field's serialisation, the message's formatting) was a sixth of the bytes a count
 * allocated (docs/adr/0140-the-access-line-built-once.md). Within a trace its fields come from
 * the mixin, so pino writes that line.
 */
function accessLine(access: Logger, stream: DestinationStream, frame: LineFrame | undefined): AccessLine {
  return (fields) => {
    if (!access.isLevelEnabled('info')) return;
    if (!frame || currentTraceIds()) return access.info(fields, 'request');
    const json = JSON.stringify(fields);
    stream.write(frame.head + new Date().toISOString() + frame.mid + json.slice(1, -1) + frame.tail);
  };
}

/**
 * Writes the access line of `log`: its format, level and stream, without redaction. The access
 * line's fields are fixed and name no secret (a token's id, never its secret), and matching the
 * redaction's wildcard paths against every line cost a tenth of a count's CPU (bench/README.md,
 * "Where a request's CPU goes").
 */
export function accessLineOf(log: Logger): AccessLine {
  return accessLines.get(log) ?? ((fields) => log.info(fields, 'request'));
}
