/**
 * Validation of one part of a request against its joi schema, and the fast acceptors of bulk
 * bodies: below http and resources, so a service that validates a patched record uses the
 * same rules and the same 400 as the router.
 */
import Joi from 'joi';
import { compileAcceptor, registerCheck } from './compiled-accept.js';
import { ValidationError } from './errors.js';

/**
 * Unknown fields are refused, never dropped: a misspelt field would otherwise change what a
 * request means (a criteria key ignored selects more). A type the document declares open says
 * so in its own schema (`.unknown(true)`); docs/adr/0060-unknown-fields-refused.md.
 */
const joiOptions: Joi.ValidationOptions = {
  abortEarly: false,
  convert: true,
  allowUnknown: false,
  errors: { wrap: { label: false } },
};

/**
 * Each schema with the options applied once: validating with options merges them into joi's
 * preferences on every call, which cost as much as the validation of a small body.
 */
const prepared = new WeakMap<Joi.Schema, Joi.Schema>();
function withOptions(schema: Joi.Schema): Joi.Schema {
  let s = prepared.get(schema);
  if (!s) {
    s = schema.prefs(joiOptions);
    prepared.set(schema, s);
  }
  return s;
}

/** A part without a declared schema takes nothing: an unknown query parameter is refused like an unknown field. */
const NOTHING = Joi.object({});

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const _ in value) return false;
  return true;
}

/**
 * A custom check that joi and the compiled acceptors make alike: a value passes unchanged when
 * `holds` is true for it, and joi answers `message` otherwise. `name` describes the check
 * (the compiled acceptors find the check by it).
 */
export function checked<S extends Joi.Schema, V>(schema: S, name: string, holds: (value: V) => boolean, message: string): S {
  registerCheck(name, holds);
  return schema.custom((v: V, helpers) => (holds(v) ? v : helpers.message({ custom: message })), name) as S;
}

/** A fast acceptor: the value `schema` would produce for a value, or undefined when it cannot tell. */
export type FastAccept = (value: unknown) => unknown;

const fastAcceptors = new WeakMap<Joi.Schema, FastAccept>();

/**
 * Gives a schema a fast acceptor, for bulk bodies where joi's per-rule machinery costs more
 * than the rest of the request (an inventory report of many items; bench/README.md has the
 * measurement). The acceptor answers only values it can vouch for, exactly as
 * joi would convert them; anything else (every error included) goes through joi. Each acceptor
 * has a property test holding it to joi's answer. The schema stays the one declaration that
 * the OpenAPI document is generated from.
 */
export function withFastAccept<S extends Joi.Schema>(schema: S, accept: FastAccept): S {
  fastAcceptors.set(schema, accept);
  return schema;
}

/**
 * The schema's fast acceptor: the one it was given, or else the one compiled from its
 * description on first use (src/compiled-accept.ts); undefined when it has neither.
 */
export function fastAcceptorOf(schema: Joi.Schema): FastAccept | undefined {
  const given = fastAcceptors.get(schema);
  if (given) return given;
  let compiled = compiledAcceptors.get(schema);
  if (compiled === undefined) {
    compiled = compileAcceptor(schema.describe());
    compiledAcceptors.set(schema, compiled);
  }
  return compiled ?? undefined;
}

const compiledAcceptors = new WeakMap<Joi.Schema, FastAccept | null>();

/**
 * Validates one part of a request; a 400 names every offending field by its path from the
 * part (`body.criteria.orgID is not allowed`). `strictWithout`: a part without a schema
 * refuses any value but an empty object (query parameters); otherwise it passes as is.
 */
export function validatePart<T>(schema: Joi.Schema | undefined, value: unknown, where: string, strictWithout = false): T {
  if (!schema) {
    if (!strictWithout) return value as T;
    // What NOTHING accepts, without a pass through joi (most requests have no query string).
    if (isEmptyObject(value)) return value as T;
    schema = NOTHING;
  }
  const fast = fastAcceptorOf(schema)?.(value);
  if (fast !== undefined) return fast as T;
  return validateWithJoi<T>(schema, value, where);
}

/** joi's answer alone, without a fast acceptor: what every acceptor is held to. */
export function validateWithJoi<T>(schema: Joi.Schema, value: unknown, where: string): T {
  const { value: out, error } = withOptions(schema).validate(value);
  if (error) {
    const name = (d: Joi.ValidationErrorItem): string => [where, ...d.path.map(String)].join('.');
    const messages = error.details.flatMap((d) => {
      if (d.type === 'object.unknown') return [`${name(d)} is not allowed`];
      // A union none of whose members matched: its members' unknown fields are named too, at any depth of unions.
      const unknownIn = (item: Joi.ValidationErrorItem): string[] =>
        item.type === 'object.unknown'
          ? [`${name(item)} is not allowed`]
          : item.type === 'alternatives.match'
            ? ((item.context?.details ?? []) as Joi.ValidationErrorItem[]).flatMap(unknownIn)
            : [];
      return [`${name(d)}: ${d.message}`, ...unknownIn(d)];
    });
    const msg = [...new Set(messages)].join('; ');
    throw new ValidationError(msg);
  }
  return out as T;
}
