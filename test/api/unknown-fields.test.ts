/**
 * A typo never widens what an operation touches: over every operation of the served OpenAPI
 * document, one unknown body field and one unknown query parameter are refused with 400
 * naming them, unless the document declares the type open (additionalProperties not false);
 * and the misspelt criteria that once selected a whole subtree are refused by name.
 */
import { expect } from 'chai';
import { sharedApp, type TestApp } from '../helpers/app.js';
import { P } from '../helpers/http.js';

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  template: string;
  op: Json;
}

const UNKNOWN_FIELD = 'zzUnknownField';
const UNKNOWN_PARAM = 'zzUnknownParam';

/** A value the path parameter's schema takes, so validation reaches the query and the body. */
function sampleParam(schema: Json | undefined, components: Record<string, Json>): string {
  if (!schema) return 'probe1';
  if (typeof schema.$ref === 'string') return sampleParam(components[schema.$ref.split('/').pop() ?? ''], components);
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  if (schema.type === 'array') return sampleParam(schema.items as Json | undefined, components);
  if (Array.isArray(schema.anyOf) || schema.format === 'ipv4' || schema.format === 'ipv6') return '10.0.0.1';
  // A semantic version (a v-prefixed pattern): one that matches it.
  if (typeof schema.pattern === 'string' && schema.pattern.startsWith('^v(')) return 'v1.0.0';
  if (schema.type === 'integer' || schema.type === 'number') return '1';
  return 'probe1';
}

/** The object schema an unknown field would land in: the body's, or an array body's items'. */
function bodyTarget(schema: Json, components: Record<string, Json>): { schema: Json; inArray: boolean } {
  const resolve = (s: Json): Json => (typeof s.$ref === 'string' ? resolve(components[s.$ref.split('/').pop() ?? '']) : s);
  const top = resolve(schema);
  if (top.type === 'array') return { schema: resolve((top.items ?? {}) as Json), inArray: true };
  return { schema: top, inArray: false };
}

/** True when the document lets an object carry fields it does not name. */
function declaredOpen(schema: Json): boolean {
  if (schema.additionalProperties === false) return false;
  // A union or conditional: open only when its alternatives are (each is checked where it applies).
  for (const key of ['anyOf', 'oneOf']) {
    const alts = schema[key];
    if (Array.isArray(alts)) return alts.some((a) => declaredOpen(a as Json));
  }
  if (schema.then && schema.else) return declaredOpen(schema.then as Json) || declaredOpen(schema.else as Json);
  return schema.type === 'object' || 'properties' in schema;
}

/** Bodies whose top level is a union that a field alone cannot choose: one valid member, so the unknown field is the only fault. */
const BASE_BODIES: Record<string, unknown> = {
  'PATCH /utm-endpoint/{id}': { op: 'replace', path: '/model', value: 'm' },
};

describe('unknown fields and query parameters are refused on every operation', function () {
  this.timeout(120_000);
  let t: TestApp;
  let ops: Operation[];
  let components: Record<string, Json>;

  before(async function () {
    this.timeout(300_000);
    t = await sharedApp();
    const doc = t.server.handle.openapi as Json;
    components = ((doc.components as Json).schemas ?? {}) as Record<string, Json>;
    ops = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), template: template.slice(P.length), op })),
    );
    expect(ops.length, 'operations in the document').to.be.greaterThan(80);
  });

  function pathOf(o: Operation): string {
    const params = (o.op.parameters ?? []) as { name: string; in: string; schema?: Json }[];
    return o.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(sampleParam(params.find((p) => p.in === 'path' && p.name === name)?.schema, components)),
    );
  }

  it('an unknown query parameter is a 400 naming it, on every operation', async () => {
    const wrong: string[] = [];
    for (const o of ops) {
      const res = await t.admin.request(o.method, `${pathOf(o)}?${UNKNOWN_PARAM}=1`);
      const message = (res.body as { message?: string }).message ?? '';
      if (res.status !== 400 || !message.includes(`query.${UNKNOWN_PARAM} is not allowed`)) {
        wrong.push(`${o.method} ${o.template} → ${res.status} ${message.slice(0, 160)}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('an unknown body field is a 400 naming it, unless the document declares the body open', async () => {
    const wrong: string[] = [];
    let refused = 0;
    let open = 0;
    for (const o of ops) {
      const requestBody = o.op.requestBody as { content: Record<string, { schema: Json }> } | undefined;
      if (!requestBody) continue;
      const [contentType, media] = Object.entries(requestBody.content)[0];
      const target = bodyTarget(media.schema, components);
      if (declaredOpen(target.schema)) {
        open++;
        continue;
      }
      const key = `${o.method} ${o.template}`;
      const base = (BASE_BODIES[key] ?? {}) as Json;
      const member = { ...base, [UNKNOWN_FIELD]: 1 };
      const body = target.inArray ? [member] : member;
      const res = await t.admin.request(o.method, pathOf(o), { body, contentType });
      const message = (res.body as { message?: string }).message ?? '';
      const named = target.inArray ? `body.0.${UNKNOWN_FIELD} is not allowed` : `body.${UNKNOWN_FIELD} is not allowed`;
      if (res.status !== 400 || !message.includes(named)) wrong.push(`${key} → ${res.status} ${message.slice(0, 200)}`);
      else refused++;
    }
    expect(wrong).to.deep.equal([]);
    expect(refused, 'bodies checked').to.be.greaterThan(40);
    // The open types are few and deliberate (docs/adr/0063-open-types.md).
    expect(open, 'bodies declared open').to.be.below(5);
  });
});

describe('a misspelt field is refused by name instead of widening the request', function () {
  this.timeout(60_000);
  let t: TestApp;
  let org: string;

  before(async function () {
    this.timeout(300_000);
    t = await sharedApp();
    org = await t.world.org();
  });

  it('page-search with criteria.orgID answers 400 naming body.criteria.orgID', async () => {
    const res = await t.admin.post('/endpoint/page-search', { criteria: { orgID: org }, pageRequest: { page: 0, size: 10 } });
    expect(res.status).to.equal(400);
    expect((res.body as { message: string }).message).to.contain('body.criteria.orgID is not allowed');
  });

  it('a job with criteria.orgID answers 400 naming it, and lists every offending field', async () => {
    const res = await t.admin.post('/jobs', { action: { type: 'DISABLE_MODULE', module: 'fim' }, criteria: { orgID: org }, bogus: 1 });
    expect(res.status).to.equal(400);
    const message = (res.body as { message: string }).message;
    expect(message).to.contain('body.criteria.orgID is not allowed').and.contain('body.bogus is not allowed');
  });

  it('creating an organization with an unknown field answers 400', async () => {
    const res = await t.admin.post('/admin/organizations', { id: `typo-${Date.now()}`, name: 'Typo', bogus: 1 });
    expect(res.status).to.equal(400);
    expect((res.body as { message: string }).message).to.contain('body.bogus is not allowed');
  });

  it('an unknown query parameter on a read answers 400 naming it', async () => {
    const res = await t.admin.get(`/jobs?sate=DONE`);
    expect(res.status).to.equal(400);
    expect((res.body as { message: string }).message).to.contain('query.sate is not allowed');
  });
});
