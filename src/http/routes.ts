/**
 * Route declarations. A declaration carries everything that describes an operation (method,
 * path, summary, tag, security, roles, lane, request and response schemas); the router
 * (src/http/router.ts), the OpenAPI document and the tenant-isolation tests are all derived
 * from the same declarations.
 */
import Joi from 'joi';
import type { Access, Role } from './auth.js';
import { ValidationError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Lane } from './admission.js';

export const API_PREFIX = '/endpoint-control-service/v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseDecl {
  description: string;
  schema?: Joi.Schema;
  /** Defaults to application/json when a schema is given; several when the Accept header chooses. */
  contentType?: string | string[];
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  access: Access;
  log: Logger;
  /** The request path, for messages. */
  path: string;
  /**
   * Set on an `idempotent` operation called with an Idempotency-Key: the id its created record
   * must take (derived from the key; src/http/idempotency.ts). Undefined: the service draws one.
   */
  createdId?: string;
  /** The first of `types` the request's Accept header admits (false: none). */
  accepts?: (...types: string[]) => string | false;
  /** Runs work in this operation's lane for this caller (a streamed answer's later store calls). */
  runInLane?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Calls `fn` when the client's connection closes (a held answer lets its channel go). */
  onClose?: (fn: () => void) => void;
}

export interface Reply {
  status: number;
  /** A Readable is streamed as is (exports, src/http/deep-paging.ts). */
  body?: unknown;
  /** Set for non-JSON bodies (text/plain). */
  contentType?: string;
  headers?: Record<string, string>;
  /** What the operation's audit event records besides who, what and which (a job's criteria and count). */
  audit?: Record<string, unknown>;
  /**
   * A held answer (the agent channel's long poll): awaited after the operation has left its
   * admission lane and without the request time-out, and answered instead of this reply.
   */
  hold?: () => Promise<Reply>;
}

export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path below the API prefix, e.g. `/endpoint/{id}`. */
  path: string;
  summary: string;
  tag: string;
  /** The spec's "sec": a token is required. Without it a token is optional but verified. */
  sec: boolean;
  /** Roles admitted besides `system` (which is admitted everywhere). */
  roles: readonly Role[];
  /**
   * The admission lane (src/http/admission.ts): `agent` for agents' and devices' hot paths,
   * `interactive` for reads of one record or a short list, `heavy` for page-searches,
   * aggregations, exports and jobs, `admin` for administrative writes.
   */
  lane: Lane;
  /** True for operations beyond the spec (admin, reads a gateway needs). */
  extension?: boolean;
  /**
   * A create whose record id the server generates: accepts an Idempotency-Key (extension) and
   * passes `createdId` to its handler, which must create the record under that id and answer
   * the existing record when that id already exists (src/http/idempotency.ts).
   */
  idempotent?: boolean;
  /**
   * Audit trail (src/http/audit.ts): calls are audited as writes; unset, exactly the
   * `admin` lane's operations are. Set for a write outside that lane.
   */
  audited?: boolean;
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  body?: Joi.Schema;
  /** Request content type; defaults to application/json when a body is declared. */
  bodyContentType?: string;
  responses: Record<number, ResponseDecl>;
  /** Error statuses the operation declares (section 7 body). */
  errors: number[];
  handler(input: HandlerInput<P, Q, B>): Promise<Reply>;
  /**
   * Extension: a page search's deep read, the same search as the handler's prepared
   * for a point in time. Declaring it gives the route `?cursor=` and an `/export` sibling
   * (src/http/deep-paging.ts).
   */
  deepSearch?(input: HandlerInput<P, Q, B>): Promise<DeepSearch<unknown>>;
}

/** Identity helper that keeps a declaration's types and erases them for the route table. */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** What the declarations of one route file share (tag, sec, roles, errors); a declaration may override each. */
export type RouteDefaults = Pick<RouteSpec, 'tag' | 'sec' | 'roles' | 'errors'>;

/** A declaration that may leave out what its file's RouteDefaults give. */
export type DeclaredRoute<P, Q, B> = Omit<RouteSpec<P, Q, B>, keyof RouteDefaults> & Partial<RouteDefaults>;

/**
 * A route file's declaration helper: `const route = routeDefaults({ tag, sec, roles, errors })`,
 * then `route<P, Q, B>({ operationId, method, path, ... })` with only what differs.
 */
export function routeDefaults(defaults: RouteDefaults) {
  return <P = Record<string, never>, Q = Record<string, never>, B = undefined>(spec: DeclaredRoute<P, Q, B>): RouteSpec =>
    defineRoute<P, Q, B>({ ...defaults, ...spec });
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });
export const emptyOk = (): Reply => ({ status: 200 });

/** koa-router path for an OpenAPI path: `{endpoint-id}` → `:endpointId`. */
export function paramKey(name: string): string {
  return name.replace(/[-_]+([a-z0-9])/gi, (_, c: string) => c.toUpperCase());
}
export function koaPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, n: string) => `:${paramKey(n)}`);
}

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

/** A part without a declared schema takes nothing: an unknown query parameter is refused like an unknown field. */
const NOTHING = Joi.object({});

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

export function fastAcceptorOf(schema: Joi.Schema): FastAccept | undefined {
  return fastAcceptors.get(schema);
}

/**
 * Validates one part of a request; a 400 names every offending field by its path from the
 * part (`body.criteria.orgID is not allowed`). `strictWithout`: a part without a schema
 * refuses any value but an empty object (query parameters); otherwise it passes as is.
 */
export function validatePart<T>(schema: Joi.Schema | undefined, value: unknown, where: string, strictWithout = false): T {
  if (!schema) {
    if (!strictWithout) return value as T;
    schema = NOTHING;
  }
  const fast = fastAcceptors.get(schema)?.(value);
  if (fast !== undefined) return fast as T;
  const { value: out, error } = schema.validate(value, joiOptions);
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

/** Where a deep read stands (opaque to this layer): a point in time and the last sort values. */
export interface DeepPosition {
  pit?: string;
  after?: unknown;
}

/** One page search, prepared for deep reads (implemented by src/store/scan.ts; served by src/http/deep-paging.ts). */
export interface DeepSearch<R> {
  /** True when pages read a frozen point in time (then totalCount bounds the pages exactly). */
  readonly frozen: boolean;
  page(
    pos: DeepPosition | undefined,
    size: number,
    opts: { keepAliveSeconds: number; from?: number; trackTotal?: boolean },
  ): Promise<{ total?: number; items: R[]; next: DeepPosition }>;
  close(pos: DeepPosition): Promise<void>;
}
