/**
 * The API contract is versioned: info.version is a semantic version with its CHANGELOG.md entry,
 * and openapi-diff (from Maven Central) compares the document the routes produce with the
 * committed docs/openapi.json of the last release, failing on a breaking change unless the
 * major version moved (docs/adr/0082-versioned-contract.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import semver from 'semver';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createClient } from '../../src/store/client.js';
import { openApiDiff } from '../helpers/client-generator.js';

type JsonObject = Record<string, unknown>;
const WORK = path.resolve('generated/contract');

function servedDocument(): JsonObject {
  const config = loadConfig({ DATABASE_URL: 'pglite:memory' });
  const client = createClient('http://127.0.0.1:9', 1000);
  const handle = createApp({
    config,
    store: { client, prefix: 'contract', refresh: 'none' },
    log: createLogger('silent'),
  });
  void client.close();
  void handle.services.deviceMigration.close();
  return JSON.parse(JSON.stringify(handle.openapi)) as JsonObject;
}

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;
const REF = '#/components/schemas/';

const versionOf = (doc: JsonObject): string => (doc.info as { version: string }).version;

describe('the API contract: semantic version, changelog, no breaking change within a major version', function () {
  this.timeout(600_000);
  const served = servedDocument();
  const released = JSON.parse(fs.readFileSync('docs/openapi.json', 'utf8')) as JsonObject;

  it('carries a semantic version with its CHANGELOG.md entry, no older than the last release', () => {
    const version = versionOf(served);
    expect(semver.valid(version), version).to.equal(version);
    expect(fs.readFileSync('CHANGELOG.md', 'utf8')).to.match(new RegExp(`^## ${version.replaceAll('.', '\\.')} `, 'm'));
    expect(semver.gte(version, versionOf(released)), `${version} < the released ${versionOf(released)}`).to.equal(true);
  });

  it('makes no breaking change against the last release unless the major version moved (openapi-diff)', () => {
    fs.mkdirSync(WORK, { recursive: true });
    const file = path.join(WORK, 'served.json');
    fs.writeFileSync(file, JSON.stringify(served, null, 2));
    const { breaking, report } = openApiDiff(WORK, path.resolve('docs/openapi.json'), file);
    if (breaking) {
      expect(
        semver.major(versionOf(served)),
        `breaking changes need a new major version:\n${report}`,
      ).to.be.greaterThan(semver.major(versionOf(released)));
    }
  });

  it('the check bites: an operation removed and a field dropped from a record are breaking', () => {
    const broken = JSON.parse(JSON.stringify(served)) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
    };
    delete broken.paths['/endpoint-control-service/v1/jobs'].get;
    delete broken.components.schemas.Host.properties.hostName;
    const file = path.join(WORK, 'broken.json');
    fs.mkdirSync(WORK, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(broken, null, 2));
    const { breaking, report } = openApiDiff(WORK, path.resolve('docs/openapi.json'), file);
    expect(breaking, report).to.equal(true);
    expect(report).to.contain('/endpoint-control-service/v1/jobs');
  });

  it('gives every operation an agent or device calls an example of its request body and of its answer', () => {
    const schemas = (served.components as { schemas: Record<string, JsonObject> }).schemas;
    const examplesOf = (schema: JsonObject | undefined): unknown[] => {
      if (!schema) return [];
      if (Array.isArray(schema.examples)) return schema.examples as unknown[];
      if (typeof schema.$ref === 'string') return examplesOf(schemas[schema.$ref.slice(REF.length)]);
      if (schema.type === 'array') return examplesOf(schema.items as JsonObject).map((e) => [e]);
      return ((schema.oneOf ?? []) as JsonObject[]).flatMap(examplesOf);
    };
    const missing: string[] = [];
    for (const [p, ops] of Object.entries(served.paths as Record<string, Record<string, JsonObject>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!(op['x-roles'] as string[]).includes('agent')) continue;
        const json = (content: unknown): JsonObject | undefined =>
          (content as Record<string, { schema: JsonObject }> | undefined)?.['application/json']?.schema;
        const body = json((op.requestBody as JsonObject | undefined)?.content);
        if (body && examplesOf(body).length === 0) missing.push(`${method} ${p} request`);
        for (const [status, r] of Object.entries(op.responses as Record<string, JsonObject>)) {
          const schema = json(r.content);
          if (status.startsWith('2') && schema && examplesOf(schema).length === 0)
            missing.push(`${method} ${p} ${status}`);
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('holds every example of a named schema to that schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const schemas = (served.components as { schemas: Record<string, JsonObject> }).schemas;
    ajv.addSchema({
      $id: 'c',
      $defs: JSON.parse(JSON.stringify(schemas).replaceAll(`"${REF}`, '"c#/$defs/')) as JsonObject,
    });
    let checked = 0;
    for (const [name, schema] of Object.entries(schemas)) {
      for (const example of (schema.examples ?? []) as unknown[]) {
        const validate = ajv.getSchema(`c#/$defs/${name}`);
        expect(validate?.(example), `${name}: ${JSON.stringify(validate?.errors)}`).to.equal(true);
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(10);
  });
});
