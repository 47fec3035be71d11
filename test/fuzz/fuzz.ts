/**
 * Property-based fuzzing of every operation in the served OpenAPI document. Invariants: no
 * 5xx (the store is up), every 4xx in the section-7 shape, every response conforming to the
 * document, requests the document accepts are not refused with 400 (unless for a rule
 * JSON Schema cannot state), the process still answering afterwards.
 */
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { Conformance } from '../helpers/conformance.js';
import { paramValue, type ParamMap } from '../helpers/stocked-org.js';
import { anyJson, malformed, pathParam, valid } from './arbitraries.js';

type Schema = Record<string, unknown>;

export interface OperationStats {
  operation: string;
  cases: number;
  byStatus: Record<string, number>;
  /** Cases that broke an invariant (the first five are described in `failures`). */
  failedCases: number;
  failures: string[];
  /**
   * Cases the document accepts (path parameters and body valid against it, declared content
   * type) sent with the system token, how many succeeded, and the 400s among them.
   */
  valid: { cases: number; ok: number; rejected: string[] };
}

export interface FuzzTarget {
  url: string;
  openapi: Schema;
  /** Tokens the cases may carry. */
  tokens: { system: string; scoped: string };
  /** Path-parameter values naming real records (test/helpers/stocked-org.ts), mixed into generated ones. */
  known?: ParamMap;
}

interface Op {
  id: string;
  method: string;
  path: string;
  params: { name: string; schema?: Schema }[];
  body?: { schema?: Schema; contentType: string };
}

/**
 * Rules the service enforces that JSON Schema cannot state (cross-field rules, references to
 * records that must exist, the result window, the clock): a 400 naming one of them is not a
 * document looser than the service. Each is documented in the operation's description or in
 * docs/adr/ (0020, 0058).
 */
const BEYOND_THE_SCHEMA: RegExp[] = [
  /beyond the \d+-result window|count-sorted pages end at/, // from + size ≤ 10,000 (src/http/paging.ts)
  /must not exceed/, // a minimum above its maximum
  /\bnot found\b|is not registered/, // a body naming a record or organization that does not exist
  /body\.orgId: required\b/, // a system token has no organization to default to
  /required for role|only agent tokens are bound|must be greater than now/, // token minting rules
  /body\.id: required to name/, // POST /lte-endpoint/update names its record in the body
  /does not match the .*of the path|differs from the name in the path|does not match the record's organization/, // a body naming another record than its path
  /say which one changes/, // an inventory change on a name installed in several versions names the old one
  /TEST_OPERATION_FAILED|OPERATION_PATH_UNRESOLVABLE|OPERATION_FROM_UNRESOLVABLE/, // a JSON Patch test that does not hold, or a pointer to nothing
  /count may only be the first sort field/, // count-sorted summary pages
  /is not allowed to be empty/, // values are trimmed first; JSON Schema has no trim
  /is not accepted by endpoint/, // the command catalogue of the endpoint's operating system and modules
  /is not an IP address|contains an invalid value/, // the comma-separated internal-ips path list
  /criteria that narrow nothing select every agent|allAgents: true selects every agent/, // a job over every agent is said explicitly
  /is not .+ or below it|is not a known time zone/, // a rollout's rings and windows name organizations of its subtree, in time zones the runtime knows
];

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

/** Validators of an operation's request (path parameters and body) as the document declares it. */
class RequestSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly cache = new Map<Schema, ValidateFunction>();

  constructor(doc: Schema) {
    addFormats(this.ajv);
    // Named schemas refer to each other: every reference points into the one `components` schema.
    const components = JSON.stringify((doc.components as Schema | undefined)?.schemas ?? {}).replaceAll('#/components/schemas/', 'components#/$defs/');
    this.ajv.addSchema({ $id: 'components', $defs: JSON.parse(components) as Schema });
  }

  private validator(schema: Schema): ValidateFunction {
    let v = this.cache.get(schema);
    if (!v) {
      v = this.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', 'components#/$defs/')) as Schema);
      this.cache.set(schema, v);
    }
    return v;
  }

  /** True when every path parameter and the body are what the document accepts. */
  accepts(op: Op, params: string[], body: unknown): boolean {
    for (const [i, p] of op.params.entries()) {
      let raw: string;
      try {
        raw = decodeURIComponent(params[i] ?? '');
      } catch {
        return false;
      }
      if (raw === '' || (p.schema && !this.validator(p.schema)(raw))) return false;
    }
    if (op.body?.schema && !this.validator(op.body.schema)(body)) return false;
    return true;
  }
}

function operations(doc: Schema): Op[] {
  const out: Op[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = ((op.parameters ?? []) as Schema[])
        .filter((p) => p.in === 'path')
        .map((p) => ({ name: p.name as string, schema: p.schema as Schema | undefined }));
      const content = (op.requestBody as Schema | undefined)?.content as Record<string, { schema?: Schema }> | undefined;
      const [contentType, media] = content ? (Object.entries(content)[0] ?? []) : [];
      out.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        params,
        body: contentType ? { schema: media?.schema, contentType } : undefined,
      });
    }
  }
  // Operations that take a record away (deletes, uninstall) run last, so the others reach the known records.
  const destructive = (op: Op): boolean => op.method === 'DELETE' || op.path.endsWith('/uninstall');
  return [...out.filter((op) => !destructive(op)), ...out.filter(destructive)];
}

interface Case {
  params: string[];
  token: 'system' | 'scoped' | 'none' | 'garbage';
  body: { kind: 'valid' | 'malformed' | 'raw' | 'none'; value: unknown };
  contentType: string | undefined;
  /** Body fields that name a path parameter (`id`, `orgId`, `type`, `name`) take its value; `orgId`/`endpointId` name real records. */
  coherent: boolean;
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The body a case sends: the generated one, made coherent with its path and the known records when the case says so. */
function bodyOf(op: Op, c: Case, known: ParamMap | undefined): unknown {
  const v = c.body.value;
  if (!c.coherent || c.body.kind !== 'valid' || !v || typeof v !== 'object' || Array.isArray(v)) return v;
  const out = { ...(v as Record<string, unknown>) };
  for (const field of ['orgId', 'endpointId']) {
    const real = known ? paramValue(known, '/', field) : undefined;
    if (field in out && real !== undefined) out[field] = real;
  }
  op.params.forEach((p, i) => {
    const field = camel(p.name);
    if (!(field in out)) return;
    try {
      out[field] = decodeURIComponent(c.params[i] ?? '');
    } catch {
      // an undecodable parameter: leave the body as generated
    }
  });
  return out;
}

/** A generated path parameter, or (one case in three) the value naming a real record when one is known. */
function paramArb(op: Op, p: Op['params'][number], doc: Schema, known: ParamMap | undefined): fc.Arbitrary<string> {
  const generated = pathParam(p.schema, doc);
  const real = known ? paramValue(known, op.path.replace(/^\/endpoint-control-service\/v1/, ''), p.name) : undefined;
  if (real === undefined) return generated;
  return fc.oneof({ weight: 2, arbitrary: generated }, { weight: 1, arbitrary: fc.constant(encodeURIComponent(real)) });
}

function caseArb(op: Op, doc: Schema, known?: ParamMap): fc.Arbitrary<Case> {
  const bodySchema = op.body?.schema;
  const body = op.body
    ? fc.oneof(
        { weight: 5, arbitrary: valid(bodySchema, doc).map((value) => ({ kind: 'valid' as const, value })) },
        { weight: 4, arbitrary: malformed(bodySchema, doc).map((value) => ({ kind: 'malformed' as const, value })) },
        { weight: 1, arbitrary: fc.constantFrom('{', '[1,', 'not json', '\u0000', '{"a":1}}').map((value) => ({ kind: 'raw' as const, value })) },
      )
    : fc.oneof(
        { weight: 9, arbitrary: fc.constant({ kind: 'none' as const, value: undefined }) },
        { weight: 1, arbitrary: anyJson.map((value) => ({ kind: 'malformed' as const, value })) },
      );
  return fc.record({
    params: fc.tuple(...op.params.map((p) => paramArb(op, p, doc, known))),
    token: fc.oneof(
      { weight: 7, arbitrary: fc.constant('system' as const) },
      { weight: 1, arbitrary: fc.constant('scoped' as const) },
      { weight: 1, arbitrary: fc.constant('none' as const) },
      { weight: 1, arbitrary: fc.constant('garbage' as const) },
    ),
    body,
    coherent: fc.boolean(),
    contentType: fc.oneof(
      { weight: 17, arbitrary: fc.constant(op.body?.contentType ?? 'application/json') },
      { weight: 1, arbitrary: fc.constant('text/plain') },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constant('application/x-www-form-urlencoded') },
    ),
  }) as fc.Arbitrary<Case>;
}

async function send(target: FuzzTarget, op: Op, c: Case, sent: unknown): Promise<{ status: number; type: string; body: unknown; path: string }> {
  let path = op.path;
  op.params.forEach((p, i) => (path = path.replace(`{${p.name}}`, c.params[i] || 'x')));
  const headers: Record<string, string> = {};
  if (c.token === 'system') headers['x-auth-token'] = target.tokens.system;
  if (c.token === 'scoped') headers['x-auth-token'] = target.tokens.scoped;
  if (c.token === 'garbage') headers['x-auth-token'] = 'ecs_' + 'A'.repeat(43);
  let payload: string | undefined;
  if (op.method === 'GET' || op.method === 'HEAD') payload = undefined;
  else if (c.body.kind === 'raw') payload = String(c.body.value);
  else if (c.body.kind !== 'none' && sent !== undefined) payload = JSON.stringify(sent);
  if (payload !== undefined && c.contentType) headers['content-type'] = c.contentType;
  // The path the server receives: fetch resolves `.` and `..` segments (also %2E) before sending.
  path = new URL(target.url + path).pathname;
  const res = await fetch(target.url + path, { method: op.method, headers, body: payload, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let body: unknown = text;
  // NDJSON (exports) stays text: one JSON document per line.
  if (type.includes('json') && !type.includes('ndjson') && text !== '') body = JSON.parse(text);
  return { status: res.status, type, body, path };
}

export interface FuzzOptions {
  /** Only operations whose id (`METHOD /path`) this accepts. */
  only?: (operation: string) => boolean;
  /** Called after each operation (progress output). */
  onOperation?: (stats: OperationStats) => void;
}

/** Runs `runs` cases per operation; returns statistics and failures per operation. */
export async function fuzz(target: FuzzTarget, runs: number, seed = Date.now(), opts: FuzzOptions = {}): Promise<OperationStats[]> {
  const conformance = new Conformance(target.openapi);
  const requests = new RequestSchemas(target.openapi);
  const stats: OperationStats[] = [];
  for (const op of operations(target.openapi)) {
    if (opts.only && !opts.only(op.id)) continue;
    const s: OperationStats = { operation: op.id, cases: 0, byStatus: {}, failedCases: 0, failures: [], valid: { cases: 0, ok: 0, rejected: [] } };
    await fc.assert(
      fc.asyncProperty(caseArb(op, target.openapi, target.known), async (c) => {
        s.cases++;
        const body = bodyOf(op, c, target.known);
        let r: Awaited<ReturnType<typeof send>>;
        try {
          r = await send(target, op, c, body);
        } catch (err) {
          s.failedCases++;
          if (s.failures.length < 5) s.failures.push(`${op.id}: request failed: ${(err as Error).message} case=${JSON.stringify(c).slice(0, 300)}`);
          return;
        }
        s.byStatus[r.status] = (s.byStatus[r.status] ?? 0) + 1;
        const problems: string[] = [];
        const wellFormed =
          c.token === 'system' &&
          c.coherent &&
          (op.body ? c.body.kind === 'valid' && c.contentType === op.body.contentType : c.body.kind === 'none') &&
          requests.accepts(op, c.params, body);
        if (wellFormed) {
          s.valid.cases++;
          const message = (r.body as { message?: string } | undefined)?.message ?? '';
          if (r.status < 300) s.valid.ok++;
          else if (r.status === 400 && !BEYOND_THE_SCHEMA.some((rule) => rule.test(message))) {
            problems.push(`400 to a request the document accepts: ${message} ← ${JSON.stringify(body)?.slice(0, 300)}`);
          } else if (r.status === 400 && s.valid.rejected.length < 5) {
            s.valid.rejected.push(`${message} ← ${r.path} ${JSON.stringify(body)?.slice(0, 300)}`);
          }
        }
        if (r.status >= 500) problems.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        problems.push(...conformance.check(op.method, r.path.split('?')[0], r.status, r.type, r.body));
        if (problems.length > 0) s.failedCases++;
        for (const p of problems) if (s.failures.length < 5) s.failures.push(`${op.id}: ${p} case=${JSON.stringify(c).slice(0, 300)}`);
      }),
      { numRuns: runs, seed, endOnFailure: false },
    );
    stats.push(s);
    opts.onOperation?.(s);
  }
  return stats;
}
