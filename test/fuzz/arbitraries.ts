/** fast-check arbitraries generated from the OpenAPI document's JSON schemas: valid, boundary and malformed values. */
import fc from 'fast-check';

type Schema = Record<string, unknown>;

const weird = fc.oneof(
  fc.constant(''),
  fc.constant(' '),
  fc.constant('null'),
  fc.constant('../../etc/passwd'),
  fc.constant('%00'),
  fc.constant('😀'.repeat(50)),
  fc.constant('\u202e\u0000\uffff'),
  fc.constant('a'.repeat(5000)),
  fc.constant('{"$gt":""}'),
  fc.constant('*'),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** Any JSON value, including deep nesting and big arrays. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constant(Array.from({ length: 3000 }, (_, i) => i)),
  fc.integer({ min: 50, max: 200 }).map((depth) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = { a: v };
    return v;
  }),
  weird,
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.constant(-1),
  fc.constant(1e308),
);

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  if (!ref) return schema;
  const name = ref.split('/').pop() as string;
  return (((root.components as Schema).schemas as Record<string, Schema>)[name] ?? {}) as Schema;
}

/** Strings of a JSON Schema `format` (the ones the generated document uses). */
function formatted(format: string): fc.Arbitrary<string> | undefined {
  switch (format) {
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'uri':
      return fc.constantFrom('https://example.com/rules.yar', 'https://rules.example.org/a/b.yar?x=1');
    case 'email':
      return fc.constant('soc@example.com');
    case 'ipv4':
      return fc.ipV4();
    case 'ipv6':
      return fc.ipV6();
    case 'uuid':
      return fc.uuid();
    default:
      return undefined;
  }
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = Math.max(min, Math.min((s.maxLength as number | undefined) ?? 24, 64));
  const byFormat = typeof s.format === 'string' ? formatted(s.format) : undefined;
  if (byFormat) return byFormat;
  const fits = (x: string): boolean => x.length >= min && x.length <= max;
  if (typeof s.pattern === 'string') {
    // Only the declared bounds filter a pattern's strings: a default bound could reject most of them.
    const declaredMax = (s.maxLength as number | undefined) ?? Infinity;
    try {
      return fc
        .stringMatching(new RegExp(s.pattern as string), { size: 'xsmall' })
        .filter((x) => x.length >= min && x.length <= declaredMax);
    } catch {
      // a pattern JavaScript cannot compile: fall through to plain strings
    }
  }
  return fc.stringMatching(/^[a-z0-9][a-z0-9.-]*$/, { size: 'small' }).filter((x) => fits(x) && x.length >= 1);
}

/** Values that satisfy the schema (as far as JSON Schema says; the fuzzer checks them against it before counting them valid). */
export function valid(schema: Schema | undefined, root: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(undefined);
  const s = resolve(schema, root);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alts && alts.length > 0) {
    // An alternative inherits the keywords around it (`{type: string, oneOf: [{format: ipv4}, {format: ipv6}]}`).
    const { anyOf: _a, oneOf: _o, ...outer } = s;
    return fc.oneof(...alts.map((a) => valid({ ...outer, ...resolve(a, root) }, root, depth + 1)));
  }
  const type = Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : (s.type as string | undefined);
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) shape[k] = valid(v, root, depth + 1);
      return fc.record(shape, { requiredKeys: [...required].filter((k) => k in shape) });
    }
    case 'array':
      return fc.array(valid(s.items as Schema, root, depth + 1), {
        minLength: (s.minItems as number | undefined) ?? 0,
        maxLength: Math.max((s.minItems as number | undefined) ?? 0, Math.min((s.maxItems as number | undefined) ?? 5, 5)),
      });
    case 'integer':
      return fc.integer({ min: (s.minimum as number | undefined) ?? -1000, max: (s.maximum as number | undefined) ?? 100_000 });
    case 'number':
      return fc.double({ min: (s.minimum as number | undefined) ?? -1e6, max: (s.maximum as number | undefined) ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringArb(s);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the schema with one part broken: wrong types, missing required, unknown enums, huge values. */
export function malformed(schema: Schema | undefined, root: Schema): fc.Arbitrary<unknown> {
  const s = schema ? resolve(schema, root) : {};
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const keys = Object.keys(props);
  const breakOne =
    keys.length > 0
      ? fc.tuple(valid(s, root), fc.constantFrom(...keys), anyJson).map(([base, k, v]) => ({ ...(base as object), [k]: v }))
      : anyJson;
  const dropRequired =
    Array.isArray(s.required) && s.required.length > 0
      ? fc.tuple(valid(s, root), fc.constantFrom(...(s.required as string[]))).map(([base, k]) => {
          const copy = { ...(base as Record<string, unknown>) };
          delete copy[k];
          return copy;
        })
      : anyJson;
  return fc.oneof(breakOne, dropRequired, anyJson);
}

/** A path parameter: mostly plausible ids, some enum values, some hostile strings. */
export function pathParam(schema: Schema | undefined, root: Schema): fc.Arbitrary<string> {
  const s = schema ? resolve(schema, root) : {};
  const plausible = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/);
  const fromEnum = Array.isArray(s.enum) ? [fc.constantFrom(...(s.enum as string[]))] : [];
  const fromSchema = s.type === 'string' && !s.enum ? [stringArb(s).filter((x) => x.trim() !== '')] : [];
  return fc.oneof(plausible, ...fromEnum, ...fromSchema, weird.filter((x) => x.length > 0)).map((v) => encodeURIComponent(String(v)));
}
