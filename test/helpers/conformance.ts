/**
 * Response conformance: every response an integration test receives is checked against the
 * OpenAPI document the service serves (status declared for the operation, body matching the
 * declared schema, errors in the section-7 shape). A mismatch fails the test that produced it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';

type Json = Record<string, unknown>;

interface OperationCheck {
  method: string;
  regex: RegExp;
  template: string;
  statuses: Map<string, { validate?: ValidateFunction; contentTypes: string[] }>;
}

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

export class Conformance {
  private readonly ops: OperationCheck[] = [];
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
    const refs = (schema: unknown): Json =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/')) as Json;
    ajv.addSchema({ $id: 'components', $defs: refs(components) });
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const [template, methods] of Object.entries(paths)) {
      const regex = new RegExp(
        '^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$',
      );
      for (const [method, op] of Object.entries(methods)) {
        const statuses = new Map<string, { validate?: ValidateFunction; contentTypes: string[] }>();
        for (const [status, resp] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          const content = resp.content as Record<string, { schema?: Json }> | undefined;
          // An operation may answer several content types (an export: NDJSON or CSV); they share one schema.
          const [, media] = content ? (Object.entries(content)[0] ?? []) : [];
          let schema = media?.schema;
          if (schema) schema = refs(schema);
          statuses.set(status, { contentTypes: Object.keys(content ?? {}), validate: schema ? ajv.compile(schema) : undefined });
        }
        this.ops.push({ method: method.toUpperCase(), regex, template, statuses });
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

  private errorShape(where: string, body: unknown): string[] {
    const b = body as Json;
    const keys = ['message', 'status', 'error', 'timestamp', 'exception', 'path'];
    if (!b || typeof b !== 'object' || keys.some((k) => !(k in b)) || Object.keys(b).length !== keys.length) {
      return [`${where}: error body is not the section-7 shape: ${JSON.stringify(body).slice(0, 200)}`];
    }
    return [];
  }
}
