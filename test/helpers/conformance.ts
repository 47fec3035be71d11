/**
 * Conformance: every response an integration test receives is checked against the OpenAPI
 * document the service serves (status declared for the operation, body matching the declared
 * schema, errors in the section-7 shape), and so is every request it sends (path parameters,
 * query parameters and body, each against its declared schema). A request the document
 * refuses must be refused by the service (a 4xx), and a request the document accepts must not
 * be refused for an unknown field; either disagreement fails the test that produced it
 * (docs/adr/0061-requests-checked-against-the-document.md).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';

type Json = Record<string, unknown>;

interface ParameterCheck {
  name: string;
  /** Path parameters of `style: simple` with an array schema arrive comma-separated. */
  list: boolean;
}

interface RequestCheck {
  path: ParameterCheck[];
  validatePath: ValidateFunction;
  query: ParameterCheck[];
  validateQuery: ValidateFunction;
  body?: { required: boolean; contentTypes: string[]; validate: ValidateFunction };
}

interface OperationCheck {
  method: string;
  regex: RegExp;
  template: string;
  statuses: Map<string, { validate?: ValidateFunction; contentTypes: string[] }>;
  request: RequestCheck;
}

/** What a test sent: the path without the query string, the query string, and the body. */
export interface SentRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType?: string;
  /** The JSON body as sent (text that is not JSON stays text); undefined: none. */
  body?: unknown;
}

const refs = (schema: Json): Json =>
  JSON.stringify(schema).includes('#/components/schemas/')
    ? (JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', 'components#/$defs/')) as Json)
    : schema;

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

/** The correlation fields an error body may carry beside the section-7 ones (requestId, traceId). */
const ERROR_EXTENSIONS = new Set(['requestId', 'traceId']);

export class Conformance {
  private readonly ops: OperationCheck[] = [];
  private readonly errorBody: ValidateFunction | undefined;
  /** Each discriminator property of the document's unions, with every value its mappings name. */
  private readonly discriminators = new Map<string, string[]>();
  readonly violations: string[] = [];

  constructor(doc: Json) {
    // Strict: a response schema with a union type, a keyword its type does not have or an unknown
    // keyword is refused when the test app starts (the document types every field exactly).
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: true });
    // The discriminator of a union (oneOf) is an annotation for code generators: oneOf already decides.
    ajv.addKeyword({ keyword: 'discriminator' });
    ajv.addKeyword({ keyword: 'x-extension' });
    addFormats(ajv);
    const components = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
    // Named schemas refer to each other: every reference points into the one `components` schema.
    ajv.addSchema({ $id: 'components', $defs: refs(components as Json) });
    this.errorBody = components.ErrorBody ? ajv.getSchema('components#/$defs/ErrorBody') : undefined;
    for (const schema of Object.values(components)) {
      const d = (schema as { discriminator?: { propertyName: string; mapping?: Record<string, string> } }).discriminator;
      if (d?.mapping) this.discriminators.set(d.propertyName, [...new Set([...(this.discriminators.get(d.propertyName) ?? []), ...Object.keys(d.mapping)])]);
    }
    // Requests: parameters arrive as text, so their validator converts as a server does (coerceTypes);
    // not strict, because a request schema keeps annotations (readOnly server-owned fields) by design.
    const requestAjv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, coerceTypes: 'array' });
    addFormats(requestAjv);
    requestAjv.addSchema({ $id: 'components', $defs: refs(components as Json) });
    const bodyAjv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(bodyAjv);
    bodyAjv.addSchema({ $id: 'components', $defs: refs(components as Json) });
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const [template, methods] of Object.entries(paths)) {
      const regex = new RegExp(
        '^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)') + '$',
      );
      for (const [method, op] of Object.entries(methods)) {
        const statuses = new Map<string, { validate?: ValidateFunction; contentTypes: string[] }>();
        for (const [status, resp] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          const content = resp.content as Record<string, { schema?: Json }> | undefined;
          // An operation may answer several content types (an export: NDJSON or CSV); they share one schema.
          const [, media] = content ? (Object.entries(content)[0] ?? []) : [];
          const schema = media?.schema ? refs(media.schema) : undefined;
          statuses.set(status, { contentTypes: Object.keys(content ?? {}), validate: schema ? ajv.compile(schema) : undefined });
        }
        this.ops.push({ method: method.toUpperCase(), regex, template, statuses, request: requestCheck(op, requestAjv, bodyAjv) });
      }
    }
    // Literal segments beat parameters: /org-config/target-versions before /org-config/{orgId}.
    this.ops.sort((a, b) => (b.template.match(/\{/g)?.length ?? 0) < (a.template.match(/\{/g)?.length ?? 0) ? 1 : -1);
  }

  /** Checks one response; returns the problems (empty when it conforms). */
  check(method: string, path: string, status: number, contentType: string, body: unknown): string[] {
    const m = method === 'HEAD' ? 'GET' : method;
    const op = this.ops.find((o) => o.method === m && o.regex.test(path));
    if (!op) return []; // unknown route: the 404/405 handling is checked by its own tests
    const where = `${method} ${op.template} → ${status}`;
    const declared = op.statuses.get(String(status));
    if (!declared) return [`${where}: status not declared (declared: ${[...op.statuses.keys()].join(', ')})`];
    if (status >= 400) return this.errorShape(where, body);
    if (!declared.validate) {
      if (body !== '' && body !== undefined) return [`${where}: body not declared but got ${JSON.stringify(body).slice(0, 200)}`];
      return [];
    }
    if (declared.contentTypes.length > 0 && !declared.contentTypes.some((t) => contentType.startsWith(t.split(';')[0]))) {
      return [`${where}: content type ${contentType}, declared ${declared.contentTypes.join(', ')}`];
    }
    if (!declared.validate(body)) {
      return [`${where}: body does not match schema: ${JSON.stringify(declared.validate.errors?.slice(0, 3))}`];
    }
    return [];
  }

  /**
   * Checks one request against the document: what it refuses (empty when it conforms). An
   * unknown route is not checked (its 404 has its own tests).
   */
  checkRequest(req: SentRequest): string[] {
    const op = this.ops.find((o) => o.method === req.method && o.regex.test(req.path));
    if (!op) return [];
    const where = `${req.method} ${op.template}`;
    const problems: string[] = [];
    const r = op.request;
    const values = op.regex.exec(req.path)?.slice(1) ?? [];
    const path: Record<string, unknown> = {};
    r.path.forEach((p, i) => {
      const v = safeDecode(values[i] ?? '');
      path[p.name] = p.list ? v.split(',') : v;
    });
    if (!r.validatePath(path)) problems.push(`${where}: path ${ajvText(r.validatePath)}`);
    const query: Record<string, unknown> = {};
    for (const name of new Set(req.query.keys())) {
      const all = req.query.getAll(name);
      query[name] = all.length === 1 ? all[0] : all;
    }
    if (!r.validateQuery(query)) problems.push(`${where}: query ${ajvText(r.validateQuery)}`);
    if (req.body === undefined) {
      if (r.body?.required) problems.push(`${where}: body required`);
    } else if (!r.body) {
      // An operation without a body never reads one; an empty one (`{}`, as some agents send) says nothing.
      const empty = req.body === '' || req.body === null || (typeof req.body === 'object' && Object.keys(req.body).length === 0);
      if (!empty) problems.push(`${where}: no body declared`);
    } else if (!r.body.validate(req.body) && !this.discriminatorDefaulted(r.body.validate, req.body)) {
      problems.push(`${where}: body ${ajvText(r.body.validate)}`);
    }
    return problems;
  }

  /**
   * The document requires a union's discriminator (`type`) in every member, as generated clients
   * need; the service takes an endpoint body without it and applies the family of its path
   * (docs/adr/0081-discriminated-unions.md). Such a body conforms when one of the
   * discriminator's values makes it conform.
   */
  private discriminatorDefaulted(validate: ValidateFunction, body: unknown): boolean {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
    for (const [property, values] of this.discriminators) {
      if (property in body) continue;
      if (values.some((v) => validate({ ...body, [property]: v }))) return true;
    }
    return false;
  }

  private errorShape(where: string, body: unknown): string[] {
    const b = body as Json;
    const keys = ['message', 'status', 'error', 'timestamp', 'exception', 'path'];
    if (!b || typeof b !== 'object' || keys.some((k) => !(k in b)) || Object.keys(b).some((k) => !keys.includes(k) && !ERROR_EXTENSIONS.has(k))) {
      return [`${where}: error body is not the section-7 shape: ${JSON.stringify(body).slice(0, 200)}`];
    }
    if (this.errorBody && !this.errorBody(b)) {
      return [`${where}: error body does not match ErrorBody: ${JSON.stringify(this.errorBody.errors?.slice(0, 3))}`];
    }
    return [];
  }
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

function ajvText(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`)
    .join('; ');
}

/** The request side of one operation: its parameters and body as validators. */
function requestCheck(op: Json, paramAjv: Ajv2020, bodyAjv: Ajv2020): RequestCheck {
  const parameters = (op.parameters ?? []) as { name: string; in: string; required?: boolean; style?: string; schema?: Json }[];
  const group = (where: string): { checks: ParameterCheck[]; validate: ValidateFunction } => {
    const declared = parameters.filter((p) => p.in === where);
    const schema: Json = {
      type: 'object',
      properties: Object.fromEntries(declared.map((p) => [p.name, refs(p.schema ?? {})])),
      required: declared.filter((p) => p.required).map((p) => p.name),
      // An undeclared query parameter is refused as an unknown body field is.
      additionalProperties: false,
    };
    return {
      checks: declared.map((p) => ({ name: p.name, list: p.schema?.type === 'array' })),
      validate: paramAjv.compile(schema),
    };
  };
  const path = group('path');
  const query = group('query');
  const requestBody = op.requestBody as { required?: boolean; content: Record<string, { schema?: Json }> } | undefined;
  const media = requestBody ? Object.values(requestBody.content)[0] : undefined;
  return {
    path: path.checks,
    validatePath: path.validate,
    query: query.checks,
    validateQuery: query.validate,
    ...(requestBody
      ? {
          body: {
            required: requestBody.required === true,
            contentTypes: Object.keys(requestBody.content),
            validate: bodyAjv.compile(refs(media?.schema ?? {})),
          },
        }
      : {}),
  };
}
