/**
 * The OpenAPI document, built from the route declarations, passes Stoplight Spectral with the
 * repository's ruleset (.spectral.yaml: `spectral:oas`) with no error, and carries no schema a
 * client generator cannot type. So a route that declares a bad schema fails `npm test`.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Joi from 'joi';
import { Document, Spectral, type Ruleset } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { defineRoute, ok, type RouteSpec } from '../../src/http/routes.js';
import { pagedCriteriaSchema } from '../../src/http/paging.js';
import { serverOwnedField, userKey } from '../../src/http/schemas.js';
import { createLogger } from '../../src/log.js';
import { createClient } from '../../src/store/client.js';

type JsonObject = Record<string, unknown>;

interface Finding {
  code: string | number;
  message: string;
  severity: number;
  path: (string | number)[];
}

/** Warnings of `spectral:oas` the document keeps, and why (docs/adr/0022-openapi-document-quality.md). */
const ACCEPTED_WARNINGS = new Set([
  'operation-description', // every operation has a summary; a description repeating it adds nothing
  'info-contact', // the service has no public contact to name
]);

/** The ruleset file the CLI uses (`npx spectral lint docs/openapi.json`), loaded by Spectral's own loader. */
async function lint(doc: JsonObject): Promise<Finding[]> {
  // Loaded untyped: the bundler's typings pull the DOM library into the whole program.
  const require = createRequire(import.meta.url);
  const { bundleAndLoadRuleset } = require('@stoplight/spectral-ruleset-bundler/with-loader') as {
    bundleAndLoadRuleset: (file: string, io: { fs: typeof fs; fetch: typeof fetch }) => Promise<Ruleset>;
  };
  const spectral = new Spectral();
  spectral.setRuleset(await bundleAndLoadRuleset(path.resolve('.spectral.yaml'), { fs, fetch }));
  return (await spectral.run(new Document(JSON.stringify(doc, null, 2), Json, 'openapi.json'))) as Finding[];
}

const show = (findings: Finding[]): string =>
  findings
    .slice(0, 20)
    .map((f) => `${f.code}: ${f.message} at ${f.path.join('.')}`)
    .join('\n');

/** Every schema object of the document (under parameters, request bodies, responses), with its path. */
function schemas(
  node: unknown,
  at: string,
  inSchema = false,
  out: [string, JsonObject][] = [],
): [string, JsonObject][] {
  if (Array.isArray(node)) {
    node.forEach((n, i) => schemas(n, `${at}/${i}`, inSchema, out));
  } else if (typeof node === 'object' && node !== null) {
    if (inSchema) out.push([at, node as JsonObject]);
    for (const [key, value] of Object.entries(node)) {
      if (inSchema && ['default', 'examples', 'enum', 'const'].includes(key)) continue;
      if (inSchema && key === 'properties') {
        for (const [name, v] of Object.entries(value as JsonObject)) schemas(v, `${at}/properties/${name}`, true, out);
      } else {
        const child = inSchema ? !['required'].includes(key) : key === 'schema';
        schemas(value, `${at}/${key}`, child, out);
      }
    }
  }
  return out;
}

function serviceDocument(): JsonObject {
  const config = loadConfig();
  const client = createClient('http://127.0.0.1:9', 1000);
  const handle = createApp({ config, store: { client, prefix: 'lint', refresh: 'none' }, log: createLogger('silent') });
  void client.close();
  return handle.openapi as JsonObject;
}

function probe(body: Joi.Schema, response: Joi.Schema): RouteSpec {
  return defineRoute({
    operationId: 'probe',
    method: 'POST',
    path: '/probe',
    summary: 'probe',
    tag: 't',
    lane: 'interactive',
    sec: true,
    roles: [],
    body,
    responses: { 200: { description: 'OK', schema: response } },
    errors: [400],
    handler: async () => ok({}),
  });
}

describe('OpenAPI document quality (Spectral spectral:oas)', function () {
  this.timeout(120_000);
  const doc = serviceDocument();

  it('has no Spectral error, and no warning beyond the accepted ones', async () => {
    const findings = await lint(doc);
    const errors = findings.filter((f) => f.severity === 0);
    expect(errors, show(errors)).to.deep.equal([]);
    const warnings = findings.filter((f) => f.severity === 1 && !ACCEPTED_WARNINGS.has(String(f.code)));
    expect(warnings, show(warnings)).to.deep.equal([]);
  });

  it('types every field: no joi internals, no "any of every type", no untyped value but a JSON patch\'s', () => {
    const all = schemas(doc.paths, '');
    expect(all.length).to.be.greaterThan(1000);
    expect(JSON.stringify(doc)).not.to.contain('"special"');
    const loose = all.filter(
      ([, s]) =>
        (Array.isArray(s.type) && s.type.filter((t) => t !== 'null').length > 1) ||
        ((s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array'))) && !('items' in s)),
    );
    expect(loose.map(([at]) => at)).to.deep.equal([]);
    // Untyped (which generators type `unknown`, and `string | unknown` is `unknown`): only RFC 6902's `value`, any JSON value.
    const typed = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'const', 'enum', 'if'];
    const untyped = all.filter(([, s]) => !typed.some((k) => k in s)).map(([at]) => at);
    expect(untyped.filter((at) => !/json-patch\+json\/schema\/.*\/properties\/value$/.test(at))).to.deep.equal([]);
    expect(untyped).to.have.length(6);
  });

  it('fails a declaration with a bad schema (the check bites)', async () => {
    const bad = buildOpenApi([probe(Joi.object({ a: Joi.string().max(2).default('abc') }), Joi.object())], 't');
    const errors = (await lint(bad)).filter((f) => f.severity === 0);
    expect(errors.map((f) => f.code)).to.include('oas3-valid-schema-example');
  });

  it('documents deep defaults by their value, server-owned fields by the record type (read-only), any value as {}', () => {
    const body = Joi.object({
      by: serverOwnedField(userKey),
      at: serverOwnedField(Joi.string().isoDate()).description('stamped by the server'),
      value: Joi.any(),
      page: pagedCriteriaSchema(Joi.object({ flag: Joi.boolean().default(false) }), ['id'], 'P'),
    });
    const d = buildOpenApi([probe(body, Joi.object())], 't') as { paths: Record<string, JsonObject> };
    const op = d.paths['/endpoint-control-service/v1/probe'].post as JsonObject;
    const schema = ((op.requestBody as JsonObject).content as Record<string, { schema: JsonObject }>)[
      'application/json'
    ].schema;
    const props = schema.properties as Record<string, JsonObject>;
    expect(props.by).to.deep.include({ type: 'object', readOnly: true });
    expect(props.at).to.deep.equal({
      type: 'string',
      format: 'date-time',
      description: 'stamped by the server',
      readOnly: true,
    });
    expect(props.value).to.deep.equal({});
    expect(props.page.default).to.deep.equal({ criteria: { flag: false }, pageRequest: { page: 0, size: 20 } });
  });

  it('leaves data and field names alone, and adds no union to a condition without both branches', () => {
    const body = Joi.object({
      if: Joi.string(),
      then: Joi.string(),
      else: Joi.string(),
      kind: Joi.string(),
      extra: Joi.string().when('kind', { is: 'x', then: Joi.required() }),
    }).when(Joi.object({ kind: Joi.valid('a') }).unknown(), { then: Joi.object({ if: Joi.required() }) });
    const d = buildOpenApi([probe(body, Joi.object())], 't') as { paths: Record<string, JsonObject> };
    const op = d.paths['/endpoint-control-service/v1/probe'].post as JsonObject;
    const schema = ((op.requestBody as JsonObject).content as Record<string, { schema: JsonObject }>)[
      'application/json'
    ].schema;
    expect(Object.keys(schema.properties as JsonObject)).to.deep.equal(['if', 'then', 'else', 'kind', 'extra']);
    expect(JSON.stringify(schema)).not.to.contain('"anyOf"');
  });

  it('gives a conditional body the union of its branches, for generators that ignore if/then/else', () => {
    const op = (doc.paths as Record<string, JsonObject>)['/endpoint-control-service/v1/endpoint'].post as JsonObject;
    const schema = ((op.requestBody as JsonObject).content as Record<string, { schema: JsonObject }>)[
      'application/json'
    ].schema;
    expect(schema).to.include.keys('if', 'then', 'else', 'anyOf');
    const types = (schema.anyOf as JsonObject[]).map(
      (s) =>
        ((s.properties as Record<string, JsonObject>).type.enum ?? [
          (s.properties as Record<string, JsonObject>).type.const,
        ]) as string[],
    );
    expect(types.flat()).to.include.members(['VC_ENDPOINT', 'EXTERNAL_UTM', 'VC_LTE']);
    expect(types).to.have.length(3);
  });
});
