/**
 * joi → OpenAPI 3.1 schemas for the document (./openapi.ts): the conversion, its corrections
 * (docs/adr/0022-openapi-document-quality.md) and the named schemas moved into `components`.
 */
import { createRequire } from 'node:module';
import type Joi from 'joi';
import { withAllowedText, withDateOnly, withoutCidrFormats, type JoiDescription } from './openapi-text-forms.js';

export type JsonSchema = Record<string, unknown>;

type JoiToJson = (schema: { describe(): unknown }, mode: string) => unknown;
let joiToJson: JoiToJson | undefined;
/**
 * joi-to-json, required the first time a document is built: it and lodash are megabytes of
 * code and heap that the service would otherwise hold from its start for a document it
 * builds once, when asked (docs/adr/0147-what-the-service-loads-on-demand.md).
 */
const converter = (): JoiToJson => (joiToJson ??= createRequire(import.meta.url)('joi-to-json') as JoiToJson);

/**
 * joi → OpenAPI 3.1 schema: joi-to-json, with the corrections that make the document exact
 * (docs/adr/0022-openapi-document-quality.md: `prepareDescription` before the conversion,
 * `correctSchema` after it), then every named schema (`.meta({ className })`,
 * docs/adr/0080-named-schemas.md) moved into `components` and referenced by `$ref`.
 */
export function toSchema(schema: Joi.Schema, components: Components): JsonSchema {
  const parse = converter();
  const description = prepareDescription(schema.describe() as JoiDescription);
  return components.extract(correctSchema(parse({ describe: () => description }, 'open-api-3.1') as JsonSchema));
}

/** Marks a named schema through the conversion (joi-to-json copies `x-` metas); removed when extracted. */
const NAME_KEY = 'x-schema-name';
const UNION_KEY = 'x-schema-discriminator';

/**
 * `.meta({ 'x-documented-as': i })` on joi alternatives: the document shows only alternative `i`
 * (with the alternatives' description), for a lenient form the service also accepts that client
 * generators cannot type (a union of an array and an object).
 */
function documentedAlternative(node: JsonSchema): JsonSchema {
  const index = node['x-documented-as'];
  if (typeof index !== 'number') return node;
  const chosen = ((node.oneOf ?? node.anyOf) as JsonSchema[] | undefined)?.[index];
  if (!chosen) throw new Error(`OpenAPI: x-documented-as ${index} names no alternative`);
  return { ...chosen, ...(node.description === undefined ? {} : { description: node.description }) };
}

/** What a use of a named schema says about that use rather than about the type: it stays beside the `$ref`. */
const USE_SITE_KEYS = ['default', 'readOnly', 'writeOnly', 'deprecated'];

/**
 * The document's named schemas. Each name stands for one shape: a name declared for two
 * different shapes fails the document's build, so a name can never silently mean two things.
 */
export class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly descriptions = new Map<string, unknown>();
  /** Each name's shape as first declared, to compare every later use with. */
  private readonly shapes = new Map<string, string>();

  /** Replaces every named schema in `schema` (deepest first) by a `$ref` to its component. */
  extract(schema: JsonSchema): JsonSchema {
    const walk = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(walk);
      if (!isObject(node)) return node;
      const out = mapSubschemas(node, walk);
      return typeof out[NAME_KEY] === 'string' ? this.register(out) : documentedAlternative(out);
    };
    return walk(schema) as JsonSchema;
  }

  private register(node: JsonSchema): JsonSchema {
    const name = node[NAME_KEY] as string;
    const useSite: JsonSchema = {};
    const shape: JsonSchema = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === NAME_KEY) continue;
      if (USE_SITE_KEYS.includes(k)) useSite[k] = v;
      else if (k !== 'description') shape[k] = v;
    }
    const union = shape[UNION_KEY];
    delete shape[UNION_KEY];
    const component = typeof union === 'string' ? this.discriminated(name, shape, union) : shape;
    const seen = this.shapes.get(name);
    if (seen === undefined) {
      this.shapes.set(name, JSON.stringify(component));
      // The first description a type is used with describes the type; a different one describes its use.
      this.descriptions.set(name, node.description);
      this.schemas[name] = node.description === undefined ? component : { description: node.description, ...component };
    } else if (seen !== JSON.stringify(component)) {
      throw new Error(
        `OpenAPI: the schema name ${name} is declared for two different shapes:\n${seen}\n${JSON.stringify(component)}`,
      );
    }
    const typeDescription = this.descriptions.get(name);
    if (node.description !== undefined && node.description !== typeDescription) useSite.description = node.description;
    return { $ref: `#/components/schemas/${name}`, ...useSite };
  }

  /**
   * A union discriminated by `propertyName`: `oneOf` its named members with the discriminator and
   * its mapping (each value of the member's property to the member), the property required in each.
   * A conditional (if/then/else) is replaced by the union of its branches.
   */
  private discriminated(name: string, shape: JsonSchema, propertyName: string): JsonSchema {
    const members = [
      ...new Set(((shape.oneOf ?? shape.anyOf ?? []) as JsonSchema[]).map((m) => String(m.$ref ?? ''))),
    ].sort();
    if (members.length < 2 || members.some((ref) => !ref.startsWith('#/components/schemas/'))) {
      throw new Error(`OpenAPI: the union ${name} must be alternatives of named schemas`);
    }
    const mapping: Record<string, string> = {};
    for (const ref of members) {
      const member = this.schemas[ref.slice('#/components/schemas/'.length)];
      const property = (member.properties as Record<string, JsonSchema> | undefined)?.[propertyName];
      const values = (property?.enum ?? (property && 'const' in property ? [property.const] : [])) as unknown[];
      if (values.length === 0) throw new Error(`OpenAPI: ${ref} has no ${propertyName} values for the union ${name}`);
      for (const v of values) mapping[String(v)] = ref;
      const required = (member.required as string[] | undefined) ?? [];
      if (!required.includes(propertyName)) member.required = [propertyName, ...required];
    }
    return { oneOf: members.map(($ref) => ({ $ref })), discriminator: { propertyName, mapping } };
  }

  /** The components sorted by name (a stable document). */
  sorted(): Record<string, JsonSchema> {
    return Object.fromEntries(Object.entries(this.schemas).sort(([a], [b]) => a.localeCompare(b)));
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** joi's marker for `Joi.object(...).default()`: "the object its keys' defaults make". */
function isDeepDefault(v: unknown): boolean {
  return isObject(v) && Object.keys(v).length === 1 && v.special === 'deep';
}

/** The value joi gives a deep default: each key's own default, nested deep defaults resolved. */
function deepDefault(desc: JoiDescription): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries((desc.keys ?? {}) as Record<string, JoiDescription>)) {
    const value = child.flags?.default;
    if (isDeepDefault(value)) out[key] = deepDefault(child);
    else if (
      value !== undefined &&
      typeof value !== 'function' &&
      !(isObject(value) && ('ref' in value || 'special' in value))
    ) {
      out[key] = value;
    }
  }
  return out;
}

/** Keys of a joi description that hold values rather than nested schemas. */
const VALUE_KEYS = new Set(['flags', 'allow', 'invalid', 'examples']);

/**
 * Corrects joi's description before the conversion: a deep default becomes the value joi
 * actually uses (joi-to-json would print joi's internal marker `{"special":"deep"}`), and a
 * server-owned field (`serverOwnedField`, src/http/schemas.ts: any value accepted, then
 * stripped) is described by the record's type it echoes, read-only.
 */
function prepareDescription(desc: JoiDescription): JoiDescription {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    let out: JoiDescription = Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, VALUE_KEYS.has(k) ? v : walk(v)]),
    );
    if (typeof out.type !== 'string') return out;
    if (isDeepDefault(out.flags?.default)) out = { ...out, flags: { ...out.flags, default: deepDefault(out) } };
    const recordType = out.metas?.find((m) => isObject(m.serverOwned))?.serverOwned as JoiDescription | undefined;
    if (out.type === 'any' && out.flags?.result === 'strip' && recordType) {
      const description = out.flags.description ?? recordType.flags?.description;
      out = {
        ...recordType,
        flags: { ...recordType.flags, ...(description ? { description } : {}) },
        metas: [...(recordType.metas ?? []), { readOnly: true }],
      };
    }
    // Named (`.meta({ className })`) after the shape corrections, which keep the name on the outer form only.
    const { metas, ...bare } = out;
    const shaped =
      out.type === 'date'
        ? withDateOnly(bare)
        : out.type === 'string'
          ? withAllowedText(withoutCidrFormats(bare))
          : bare;
    return nameMetas(metas ? { ...shaped, metas } : shaped);
  };
  return walk(desc) as JoiDescription;
}

/** `.meta({ className, discriminator })` → the `x-` metas joi-to-json carries into the converted schema. */
function nameMetas(desc: JoiDescription): JoiDescription {
  const metas = desc.metas ?? [];
  // The last name given wins: a schema extended from a named one (`.keys()`) is named anew.
  const named = metas.findLast((m) => typeof m.className === 'string');
  if (named === undefined) return desc;
  const { className, discriminator } = named;
  const marks: Record<string, unknown>[] = [
    { [NAME_KEY]: className },
    ...(discriminator ? [{ [UNION_KEY]: discriminator }] : []),
  ];
  return {
    ...desc,
    metas: [...metas.filter((m) => m.className === undefined && m.discriminator === undefined), ...marks],
  };
}

/** The type list joi-to-json gives `Joi.any()`: "array" without items, which no generator can type. */
const JOI_ANY_TYPES = ['array', 'boolean', 'number', 'object', 'string', 'null'];

/**
 * Corrects the converted schema: `Joi.any()` becomes `{}` (any JSON value); an IP address
 * of either version is `anyOf` its formats (with `oneOf`, a validator that treats `format` as
 * an annotation, as JSON Schema 2020-12 does by default, would refuse every address), each
 * alternative typed (an untyped one makes generators type the field `string | unknown`); and a
 * conditional (`Joi.alternatives().conditional`, converted to if/then/else, which code
 * generators ignore) also lists its branches in `anyOf`, which restricts nothing the
 * condition does not, so generated clients get the union of the branches.
 */
export function correctSchema(schema: JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    const out = mapSubschemas(node, walk);
    // One allowed value: an enum of one, typed (code generators read a discriminator's values from `enum`).
    if ('const' in out && !('enum' in out) && ['string', 'number', 'boolean'].includes(typeof out.const)) {
      out.type ??=
        typeof out.const === 'number' ? (Number.isInteger(out.const) ? 'integer' : 'number') : typeof out.const;
      out.enum = [out.const];
      delete out.const;
    }
    // A choice of texts (an allowed-text alternative, withAllowedText) is typed, as generators need.
    const choices = 'const' in out ? [out.const] : Array.isArray(out.enum) ? out.enum : undefined;
    if (out.type === undefined && choices?.length && choices.every((c) => typeof c === 'string')) out.type = 'string';
    const type = out.type;
    if (Array.isArray(type) && type.length === JOI_ANY_TYPES.length && JOI_ANY_TYPES.every((t) => type.includes(t))) {
      delete out.type;
    }
    for (const key of ['oneOf', 'anyOf']) {
      const formats = out[key];
      if (Array.isArray(formats) && formats.every((s) => isObject(s) && Object.keys(s).length === 1 && 'format' in s)) {
        delete out[key];
        out.anyOf = formats.map((s: JsonSchema) => ({ ...(typeof type === 'string' ? { type } : {}), ...s }));
      }
    }
    // Only with both branches: an if/then alone lets anything else through.
    if (isObject(out.if) && isObject(out.then) && isObject(out.else) && !('anyOf' in out) && !('oneOf' in out)) {
      out.anyOf = [out.then, out.else].flatMap((branch) => conditionalBranches(branch as JsonSchema));
    }
    return out;
  };
  return walk(schema) as JsonSchema;
}

/** Keywords whose value is data, not a schema; and keywords whose value maps names to schemas. */
const VALUE_KEYWORDS = new Set(['default', 'examples', 'enum', 'const', 'required']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

const mapValues = (o: Record<string, unknown>, f: (v: unknown) => unknown): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** A node's copy with `walk` applied to each subschema: value keywords kept, schema maps walked entry by entry. */
function mapSubschemas(node: JsonSchema, walk: (n: unknown) => unknown): JsonSchema {
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      VALUE_KEYWORDS.has(k) ? v : SCHEMA_MAPS.has(k) && isObject(v) ? mapValues(v, walk) : walk(v),
    ]),
  );
}

/** The alternatives a conditional's branch stands for (a nested conditional: its own branches). */
function conditionalBranches(branch: JsonSchema): JsonSchema[] {
  const onlyConditional = Object.keys(branch).every((k) => ['if', 'then', 'else', 'anyOf'].includes(k));
  return onlyConditional && Array.isArray(branch.anyOf) ? (branch.anyOf as JsonSchema[]) : [branch];
}
