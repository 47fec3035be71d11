/**
 * Compiled acceptors: a joi schema's description turned once into a plain function that answers
 * the values joi would leave as they are, with joi's defaults filled in. Anything it cannot vouch
 * for (a conversion, an error, a rule it does not know) it declines, and joi answers instead, so
 * every 400 and every conversion is still joi's. docs/adr/0138-validation-compiled-once.md.
 */

/** What a compiled node answers when it cannot vouch for a value. */
const NO: unique symbol = Symbol('declined');
type Node = (value: unknown) => unknown;

interface Rule {
  name: string;
  args?: Record<string, unknown>;
}

/** joi's description of a schema (`describe()`), the parts the compiler reads. */
export interface Description {
  type: string;
  flags?: Record<string, unknown>;
  rules?: Rule[];
  allow?: unknown[];
  keys?: Record<string, Description>;
  items?: Description[];
  preferences?: Record<string, unknown>;
}

/**
 * The parts of a description the compiler reads or that change no accepted value (documentation,
 * and error messages: an error is joi's to answer).
 */
const KNOWN = new Set(['type', 'flags', 'rules', 'allow', 'keys', 'items', 'preferences', 'metas', 'examples', 'notes', 'tags']);
const KNOWN_FLAGS = new Set(['label', 'description', 'default', 'presence', 'only', 'result', 'unknown']);
const KNOWN_RULE_PARTS = new Set(['name', 'args', 'message']);

/**
 * Checks a custom rule makes, by the rule's name: a value the check holds for is one the rule
 * returns unchanged (src/validation.ts `checked` declares both from one predicate).
 */
const customChecks = new Map<string, (value: never) => boolean>();

export function registerCheck(name: string, holds: (value: never) => boolean): void {
  const known = customChecks.get(name);
  if (known && known !== holds) throw new Error(`a different check is already named ${name}`);
  customChecks.set(name, holds);
}

class Unsupported extends Error {}
const unsupported = (what: string): never => {
  throw new Unsupported(what);
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A rule's numeric argument; a reference or anything else is beyond the compiler. */
function limit(rule: { args?: Record<string, unknown> }): number {
  const n = rule.args?.limit;
  return typeof n === 'number' ? n : unsupported('limit');
}

/** `/body/flags` as joi describes a pattern; a stateful (g, y) pattern is left to joi. */
function regex(source: unknown): RegExp {
  if (typeof source !== 'string') return unsupported('pattern');
  const end = source.lastIndexOf('/');
  const flags = source.slice(end + 1);
  if (!source.startsWith('/') || end <= 0 || /[gy]/.test(flags)) return unsupported('pattern flags');
  return new RegExp(source.slice(1, end), flags);
}

function stringNode(rules: NonNullable<Description['rules']>): Node {
  const checks: ((s: string) => boolean)[] = [];
  for (const r of rules) {
    switch (r.name) {
      case 'trim':
        if (r.args?.enabled === true) checks.push((s) => s.trim() === s);
        break;
      case 'min': {
        const n = limit(r);
        if (r.args?.encoding !== undefined) unsupported('encoding');
        checks.push((s) => s.length >= n);
        break;
      }
      case 'max': {
        const n = limit(r);
        if (r.args?.encoding !== undefined) unsupported('encoding');
        checks.push((s) => s.length <= n);
        break;
      }
      case 'length': {
        const n = limit(r);
        if (r.args?.encoding !== undefined) unsupported('encoding');
        checks.push((s) => s.length === n);
        break;
      }
      case 'pattern': {
        const re = regex(r.args?.regex);
        const options = r.args?.options as { invert?: boolean } | undefined;
        const invert = options?.invert === true;
        checks.push((s) => re.test(s) !== invert);
        break;
      }
      case 'case': {
        const upper = r.args?.direction === 'upper';
        checks.push((s) => (upper ? s.toLocaleUpperCase() : s.toLocaleLowerCase()) === s);
        break;
      }
      default:
        unsupported(`string rule ${r.name}`);
    }
  }
  return (v) => {
    // joi refuses '' unless allowed (the allowed values were tried before this).
    if (typeof v !== 'string' || v === '') return NO;
    for (const check of checks) if (!check(v)) return NO;
    return v;
  };
}

function numberNode(rules: NonNullable<Description['rules']>): Node {
  const checks: ((n: number) => boolean)[] = [];
  for (const r of rules) {
    switch (r.name) {
      case 'integer':
        checks.push((n) => Number.isInteger(n));
        break;
      case 'min': {
        const l = limit(r);
        checks.push((n) => n >= l);
        break;
      }
      case 'max': {
        const l = limit(r);
        checks.push((n) => n <= l);
        break;
      }
      case 'greater': {
        const l = limit(r);
        checks.push((n) => n > l);
        break;
      }
      case 'less': {
        const l = limit(r);
        checks.push((n) => n < l);
        break;
      }
      default:
        unsupported(`number rule ${r.name}`);
    }
  }
  return (v) => {
    // Infinities, unsafe magnitudes and -0 are joi's to refuse or convert.
    if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER || Object.is(v, -0)) return NO;
    for (const check of checks) if (!check(v)) return NO;
    return v;
  };
}

function arrayNode(d: Description): Node {
  const items = d.items ?? [];
  if (items.length > 1) unsupported('alternative items');
  if (items[0]?.flags?.result === 'strip') unsupported('stripped items');
  const item = items.length === 1 ? compileNode(items[0]) : undefined;
  let min = 0;
  let max = Infinity;
  for (const r of d.rules ?? []) {
    if (r.name === 'min') min = limit(r);
    else if (r.name === 'max') max = limit(r);
    else if (r.name === 'length') min = max = limit(r);
    else unsupported(`array rule ${r.name}`);
  }
  return (v) => {
    if (!Array.isArray(v) || v.length < min || v.length > max) return NO;
    if (!item) return v;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      // A hole or an item joi would strip or drop is joi's to answer.
      if (x === undefined) return NO;
      const y = item(x);
      if (y === NO || y === undefined) return NO;
      out[i] = y;
    }
    return out;
  };
}

function objectNode(d: Description): Node {
  if (d.rules?.length) unsupported('object rules');
  const open = d.flags?.unknown === true;
  if (!d.keys) return (v) => (isPlainObject(v) ? v : NO);
  const keys = Object.entries(d.keys).map(([key, child]) => ({ key, node: compileNode(child), strip: child.flags?.result === 'strip' }));
  const known = new Set(keys.map((k) => k.key));
  return (v) => {
    if (!isPlainObject(v)) return NO;
    if (!open) for (const k in v) if (!known.has(k)) return NO;
    // joi answers a shallow copy: the body's keys in their order, then the defaults it filled.
    const out: Record<string, unknown> = { ...v };
    for (const { key, node, strip } of keys) {
      const y = node(v[key]);
      if (y === NO) return NO;
      if (strip) delete out[key];
      else if (y !== undefined) out[key] = y;
    }
    return out;
  };
}

/** A node for one described schema: its type's checks inside presence, allowed values and default. */
function compileNode(described: Description): Node {
  for (const k of Object.keys(described)) if (!KNOWN.has(k)) unsupported(`description part ${k}`);
  for (const k of Object.keys(described.preferences ?? {})) if (k !== 'messages') unsupported(`preference ${k}`);
  const flags = described.flags ?? {};
  for (const k of Object.keys(flags)) if (!KNOWN_FLAGS.has(k)) unsupported(`flag ${k}`);
  if (flags.result !== undefined && flags.result !== 'strip') unsupported('result');
  const checks: ((value: never) => boolean)[] = [];
  const rules: Rule[] = [];
  for (const r of described.rules ?? []) {
    for (const k of Object.keys(r)) if (!KNOWN_RULE_PARTS.has(k)) unsupported(`rule part ${k}`);
    if (r.name !== 'custom') rules.push(r);
    else {
      const check = customChecks.get(String(r.args?.description));
      if (!check) unsupported('custom rule');
      else checks.push(check);
    }
  }
  const d: Description = { ...described, rules };
  const allow = d.allow ?? [];
  for (const a of allow) if (a !== null && typeof a === 'object') unsupported('allowed value by reference');
  const only = flags.only === true;
  const presence = flags.presence;
  if (presence !== undefined && presence !== 'required' && presence !== 'optional' && presence !== 'forbidden') unsupported('presence');

  let typed: Node;
  switch (d.type) {
    case 'any':
      if (d.rules?.length) unsupported('any rules');
      typed = (v) => v;
      break;
    case 'boolean':
      if (d.rules?.length) unsupported('boolean rules');
      typed = (v) => (typeof v === 'boolean' ? v : NO);
      break;
    case 'string':
      typed = stringNode(d.rules ?? []);
      break;
    case 'number':
      typed = numberNode(d.rules ?? []);
      break;
    case 'array':
      typed = arrayNode(d);
      break;
    case 'object':
      typed = objectNode(d);
      break;
    default:
      return unsupported(`type ${d.type}`);
  }

  if (checks.length) {
    const base = typed;
    typed = (v) => {
      const out = base(v);
      if (out === NO) return NO;
      for (const check of checks) if (!check(out as never)) return NO;
      return out;
    };
  }

  const fallback = flags.default;
  let absent: () => unknown;
  if (fallback === undefined) absent = () => undefined;
  // `.default()` of an object: its keys' own defaults, as joi builds them from {}.
  else if (d.type === 'object' && isPlainObject(fallback) && fallback.special === 'deep' && Object.keys(fallback).length === 1) absent = () => typed({});
  // A default computed by a function or read from a reference is joi's to give.
  else if (typeof fallback === 'function' || (isPlainObject(fallback) && 'ref' in fallback)) return unsupported('default computed or by reference');
  else if (fallback === null || typeof fallback !== 'object') absent = () => fallback;
  // joi answers a copy of a default given by value, not checked against the schema.
  else absent = () => structuredClone(fallback);

  return (v) => {
    if (v === undefined) return presence === 'required' ? NO : presence === 'forbidden' ? undefined : absent();
    if (presence === 'forbidden') return NO;
    for (const a of allow) if (a === v) return v;
    if (only) return NO;
    return typed(v);
  };
}

/** What `compileAcceptor` answers: the converted value, or undefined when joi must answer. */
export type CompiledAccept = (value: unknown) => unknown;

/**
 * Compiles a schema's description (joi's `describe()`), or answers null when the schema uses
 * something the compiler leaves to joi: alternatives, dates, custom rules, references, renames,
 * conditions, conversions of their own. The caller then validates with joi alone.
 */
export function compileAcceptor(description: unknown): CompiledAccept | null {
  let node: Node;
  try {
    if ((description as Description).flags?.result === 'strip') unsupported('a stripped whole');
    node = compileNode(description as Description);
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
  return (value) => {
    const out = node(value);
    return out === NO ? undefined : out;
  };
}
