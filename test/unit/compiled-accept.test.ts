import { expect } from 'chai';
import fc from 'fast-check';
import Joi from 'joi';
import { createApp } from '../../src/app.js';
import { compileAcceptor, type Description } from '../../src/compiled-accept.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { UTM_CRITERIA, endpointIdParams, pagedEndpointCriteria, pagedUtmCriteria } from '../../src/resources/endpoints/schema.js';
import { createClient } from '../../src/store/client.js';
import { checked, fastAcceptorOf, validatePart, validateWithJoi } from '../../src/validation.js';

/** joi alone: the converted value, or the 400's message. */
function viaJoi(schema: Joi.Schema, value: unknown): { value?: unknown; error?: string } {
  try {
    return { value: validateWithJoi(schema, value, 'body') };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const limitOf = (d: Description, name: string): number | undefined => {
  const n = d.rules?.find((r) => r.name === name)?.args?.limit;
  return typeof n === 'number' ? n : undefined;
};

/**
 * Values for a described schema: mostly of its own shape (its allowed values, strings at its
 * length limits, numbers about its bounds, records of its keys with some left out and now and
 * then an unknown one), mixed with what a careless client sends (wrong types, padded or
 * re-cased strings, numbers as text).
 */
function valuesOf(d: Description, depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof(plausible(d, depth), careless(d, depth));
}

/** Values a client following the document sends: allowed values, short ids, integers in bounds; a slip now and then. */
function plausible(d: Description, depth: number): fc.Arbitrary<unknown> {
  const allowed = (d.allow ?? []).filter((a) => a === null || typeof a !== 'object');
  let typed: fc.Arbitrary<unknown>;
  if (allowed.length) typed = fc.constantFrom(...allowed);
  else if (d.type === 'string') typed = fc.constantFrom('ep-1', 'msp-0', 'site', 'abc', 'id');
  else if (d.type === 'number') typed = fc.integer({ min: limitOf(d, 'min') ?? 0, max: Math.min(limitOf(d, 'max') ?? 100, 10_000) });
  else if (d.type === 'boolean') typed = fc.boolean();
  else if (d.type === 'array' && d.items?.[0] && depth < 5)
    typed = fc.array(plausible(d.items[0], depth + 1), { maxLength: Math.min(limitOf(d, 'max') ?? 3, 3) });
  else if (d.type === 'object' && d.keys && depth < 5) {
    const fields = Object.fromEntries(
      Object.entries(d.keys).map(([k, child]) => [k, fc.oneof({ weight: 15, arbitrary: plausible(child, depth + 1) }, { weight: 1, arbitrary: careless(child, depth + 1) })]),
    );
    const required = Object.entries(d.keys).filter(([, c]) => c.flags?.presence === 'required').map(([k]) => k);
    typed = fc.record(fields, { requiredKeys: required });
  } else return careless(d, depth);
  return typed;
}

function careless(d: Description, depth: number): fc.Arbitrary<unknown> {
  const junk = fc.constantFrom<unknown>(null, 0, 1.5, -1, 'x', '', ' ', '7', 'true', true, false, [], {});
  const allowed = (d.allow ?? []).filter((a) => a === null || typeof a !== 'object');
  const variants = allowed.flatMap((a) => (typeof a === 'string' ? [a, a.toLowerCase(), a.toUpperCase(), ` ${a}`, `${a} `] : [a]));
  let typed: fc.Arbitrary<unknown>;
  switch (d.type) {
    case 'string': {
      const max = limitOf(d, 'max') ?? 16;
      typed = fc.oneof(
        fc.string({ maxLength: Math.min(max + 2, 24) }),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
        fc.constantFrom('ep-1', 'msp-0', 'a'.repeat(max), 'a'.repeat(max + 1), ' lead', 'trail ', 'a/b', 'a b', 'MiXeD', 'lower', 'UPPER'),
        fc.constantFrom('é'.repeat(Math.min(max, 300)), '\u{1F600}'.repeat(Math.min(Math.floor(max / 2), 150))),
      );
      break;
    }
    case 'number': {
      const max = limitOf(d, 'max') ?? 100;
      const min = limitOf(d, 'min') ?? 0;
      typed = fc.oneof(fc.integer({ min: min - 2, max: max + 2 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(2 ** 53, 0.5, `${min}`));
      break;
    }
    case 'boolean':
      typed = fc.constantFrom(true, false, 'true', 'false', 'no', 1);
      break;
    case 'array': {
      const item = d.items?.[0];
      const max = limitOf(d, 'max') ?? 4;
      typed = depth > 4 || !item ? fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }) : fc.array(careless(item, depth + 1), { maxLength: Math.min(max + 1, 6) });
      break;
    }
    case 'object': {
      if (!d.keys || depth > 4) {
        typed = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
        break;
      }
      const fields = Object.fromEntries(Object.entries(d.keys).map(([k, child]) => [k, careless(child, depth + 1)]));
      const required = Object.entries(d.keys).filter(([, c]) => c.flags?.presence === 'required').map(([k]) => k);
      typed = fc
        .tuple(
          fc.oneof(fc.record(fields, { requiredKeys: required }), fc.record(fields, { requiredKeys: [] })),
          fc.option(fc.constantFrom('zzUnknown', 'orgID', '__proto__x'), { freq: 6 }),
        )
        .map(([o, extra]) => (extra === null ? o : { ...o, [extra]: 'x' }));
      break;
    }
    default:
      typed = fc.jsonValue({ maxDepth: 2 });
  }
  return fc.oneof(
    { weight: 8, arbitrary: typed },
    { weight: 1, arbitrary: junk },
    ...(variants.length ? [{ weight: 4, arbitrary: fc.constantFrom(...variants) }] : []),
  );
}

/** What a JSON body can hold: no undefined, no -0. */
const asJson = (v: unknown): unknown => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown));

function serviceRoutes() {
  const client = createClient('http://127.0.0.1:9', 1000);
  const handle = createApp({ config: loadConfig(), store: { client, prefix: 'fuzz', refresh: 'none' }, log: createLogger('silent') });
  void client.close();
  return handle.routes;
}

describe('compiled acceptors', function () {
  this.timeout(120_000);

  it("answer what joi answers, whenever they answer, for every part of every operation the service declares (fuzzed; seed printed on failure)", () => {
    const parts = serviceRoutes().flatMap((r) =>
      (['params', 'query', 'body'] as const).flatMap((part) => (r[part] ? [{ name: `${r.operationId} ${part}`, schema: r[part] }] : [])),
    );
    const compiled = parts.filter((p) => fastAcceptorOf(p.schema));
    // The hot operations' parts are compiled: a schema change that makes them fall back to joi shows here.
    for (const name of ['countUtmEndpoints body', 'aggregateUtmEndpointModels body', 'searchUtmEndpoints body', 'searchEndpoints body', 'getEndpoint params', 'connectEndpoint params']) {
      expect(compiled.map((p) => p.name), name).to.include(name);
    }
    expect(compiled.length, 'parts with a compiled acceptor').to.be.greaterThan(parts.length * 0.7);
    let taken = 0;
    let tried = 0;
    for (const { name, schema } of compiled) {
      const fast = fastAcceptorOf(schema) as (v: unknown) => unknown;
      fc.assert(
        fc.property(valuesOf(schema.describe() as Description).map(asJson), (value) => {
          tried++;
          const out = fast(value);
          if (out === undefined) return;
          taken++;
          const joi = viaJoi(schema, value);
          expect(joi.error, `${name}: ${JSON.stringify(value)}`).to.equal(undefined);
          expect(out, `${name}: ${JSON.stringify(value)}`).to.deep.equal(joi.value);
        }),
        { numRuns: 250 },
      );
    }
    expect(taken / tried, 'share of fuzzed values a compiled acceptor answered').to.be.greaterThan(0.3);
  });

  it('take the bodies agents and consoles send most, with joi’s defaults filled in', () => {
    const count = { orgId: 'msp-0', includeChildren: true };
    expect(validatePart(UTM_CRITERIA, count, 'body')).to.deep.equal(viaJoi(UTM_CRITERIA, count).value);
    expect(fastAcceptorOf(UTM_CRITERIA)?.({ orgId: 'msp-0' })).to.deep.equal({ orgId: 'msp-0', includeChildren: false });
    const page = { criteria: { orgId: 'msp-0', basic: 'reception' }, pageRequest: { page: 0, size: 20 } };
    expect(fastAcceptorOf(pagedEndpointCriteria)?.(page)).to.deep.equal(viaJoi(pagedEndpointCriteria, page).value);
    for (const body of [{}, { criteria: { orgId: 'msp-0', includeChildren: true } }, { pageRequest: { sort: [{ field: 'serialId' }] } }]) {
      const out = fastAcceptorOf(pagedUtmCriteria)?.(body);
      expect(out, JSON.stringify(body)).to.not.equal(undefined);
      expect(out).to.deep.equal(viaJoi(pagedUtmCriteria, body).value);
    }
    expect(fastAcceptorOf(endpointIdParams)?.({ id: 'ep-7f3a9c' })).to.deep.equal({ id: 'ep-7f3a9c' });
  });

  it('leave every conversion and every error to joi', () => {
    const fast = fastAcceptorOf(pagedUtmCriteria) as (v: unknown) => unknown;
    const declined = [
      { criteria: { orgId: ' msp-0' } }, // trimmed by joi
      { criteria: { orgId: 'msp-0', includeChildren: 'true' } }, // converted by joi
      { pageRequest: { size: '20' } },
      { pageRequest: { sort: [{ field: 'id', direction: 'asc' }] } }, // upper-cased by joi
      { criteria: { orgID: 'msp-0' } }, // unknown: joi's 400 names it
      { pageRequest: { size: 1001 } },
      { pageRequest: { page: -0.5 } },
      { criteria: { wanStatuses: ['WAN1', 'WAN2', 'WAN1'] } },
      { criteria: { siteId: '' } },
      'criteria',
      null,
    ];
    for (const body of declined) expect(fast(body), JSON.stringify(body)).to.equal(undefined);
    expect(viaJoi(pagedUtmCriteria, { criteria: { orgID: 'msp-0' } }).error).to.equal('body.criteria.orgID is not allowed');
  });

  it('hold a custom check declared with `checked` to the same predicate as joi, and decline an undeclared one', () => {
    const fast = fastAcceptorOf(endpointIdParams) as (v: unknown) => unknown;
    for (const id of ['é'.repeat(200), '\u{1F600}'.repeat(128), 'ü'.repeat(250) + '\u{1F600}'.repeat(3)]) {
      expect(Buffer.byteLength(id), id).to.be.at.most(512);
      expect(fast({ id }), id).to.deep.equal({ id });
    }
    const overBytes = '€'.repeat(171); // 171 characters, 513 bytes
    expect(fast({ id: overBytes })).to.equal(undefined);
    expect(viaJoi(endpointIdParams, { id: overBytes }).error).to.equal('body.id: must be at most 512 bytes');
    expect(fast({ id: 'a'.repeat(257) }), 'over 256 characters').to.equal(undefined);
    const s = checked(Joi.string().max(300), 'at most 8 bytes in UTF-8 (test)', (v: string) => Buffer.byteLength(v) <= 8, 'must be at most 8 bytes');
    expect(fastAcceptorOf(s)?.('abcd')).to.equal('abcd');
    expect(fastAcceptorOf(s)?.('ééééé')).to.equal(undefined);
    expect(viaJoi(s, 'ééééé').error).to.equal('body: must be at most 8 bytes');
    expect(compileAcceptor(Joi.string().custom((v: string) => v).describe())).to.equal(null);
  });

  it('decline, at compile time, what they cannot vouch for', () => {
    const unsupported: Joi.Schema[] = [
      Joi.alternatives().try(Joi.string(), Joi.number()),
      Joi.date().iso(),
      Joi.string().email(),
      Joi.string().insensitive().valid('A'),
      Joi.number().unsafe(),
      Joi.number().precision(2),
      Joi.array().items(Joi.string(), Joi.number()),
      Joi.array().single().items(Joi.string()),
      Joi.object({ a: Joi.string() }).rename('b', 'a'),
      Joi.object({ a: Joi.string(), b: Joi.string() }).or('a', 'b'),
      Joi.object().pattern(/x/, Joi.string()),
      Joi.string().empty(''),
      Joi.object({ a: Joi.string() }).prefs({ convert: false }),
      Joi.string().when('$x', { is: 1, then: Joi.required() }),
      Joi.any().raw(),
      Joi.number().default(() => 1),
      Joi.string().default(Joi.ref('$x')),
      Joi.object({ a: Joi.string().default(Joi.ref('b')), b: Joi.string() }),
    ];
    for (const s of unsupported) expect(compileAcceptor(s.describe()), JSON.stringify(s.describe())).to.equal(null);
  });

  it('follow joi on defaults, presence, stripped and open objects, and numbers at their edges', () => {
    const s = Joi.object({
      a: Joi.number().integer().min(0).default(3),
      b: Joi.object({ c: Joi.boolean().default(true) }).default(),
      d: Joi.object({ e: Joi.string().default('x') }).default({ z: 1 }),
      f: Joi.any().strip(),
      g: Joi.string().forbidden(),
      h: Joi.object().unknown(true),
      i: Joi.string().lowercase().allow(''),
    });
    const fast = compileAcceptor(s.describe()) as (v: unknown) => unknown;
    for (const v of [{}, { a: 0, f: { any: 1 }, h: { k: [1] }, i: '' }, { b: {}, d: { e: 'y' }, i: 'abc' }]) {
      const out = fast(v);
      expect(out, JSON.stringify(v)).to.not.equal(undefined);
      expect(out).to.deep.equal(viaJoi(s, v).value);
    }
    const dflt = fast({}) as { d: Record<string, unknown> };
    dflt.d.z = 2;
    expect((fast({}) as { d: Record<string, unknown> }).d.z, 'a default given by value is copied').to.equal(1);
    for (const v of [{ g: 'x' }, { a: -0 }, { a: 2 ** 53 }, { a: Infinity }, { a: 1.5 }, { i: 'ABC' }, { k: 1 }]) {
      expect(fast(v), JSON.stringify(v)).to.equal(undefined);
    }
    expect(compileAcceptor(Joi.string().required().describe())?.(undefined)).to.equal(undefined);
  });
});
