/**
 * Route declarations. A declaration carries everything that describes an operation (method,
 * path, summary, tag, security, roles, lane, request and response schemas); the router
 * (src/http/router.ts), the OpenAPI document and the tenant-isolation tests are all derived
 * from the same declarations.
 */
import Joi from 'joi';
import type { Access } from '../access/access.js';
import type { Role } from '../access/principal.js';
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
   * (or its move, for a status move) must take (derived from the key; src/http/idempotency.ts).
   * Undefined: the service draws one.
   */
  createdId?: string;
  /** The first of `types` the request's Accept header admits (false: none). */
  accepts?: (...types: string[]) => string | false;
  /** Runs work in this operation's lane for this caller (a streamed answer's later store calls). */
  runInLane?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Calls `fn` when the client's connection closes (a held answer lets its channel go). */
  onClose?: (fn: () => void) => void;
}

/** Where a request's logger comes from: made on first read (src/http/observe.ts). */
export interface LogSource {
  readonly log: Logger;
}

/**
 * Every field of a handler's input but its logger, each named even when undefined (the keys are
 * mapped without the optional marks): a field added to HandlerInput fails the build where an
 * input is made until it is passed on.
 */
export type InputFields<P, Q, B> = { [K in Exclude<keyof HandlerInput<P, Q, B>, 'log'>]: HandlerInput<P, Q, B>[K] };

/**
 * A handler's input, built once per request. A class, so `log` is an accessor on its prototype:
 * an object literal with an accessor of its own is a dictionary-mode object, and one made per
 * request kept the request's whole closure context (its parsed body among it) alive until the
 * next major collection, so every request's working set was promoted to the old generation
 * (docs/adr/0154-no-accessor-of-its-own-on-a-request-object.md).
 */
export class RequestInput<P, Q, B> implements HandlerInput<P, Q, B>, InputFields<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  access: Access;
  path: string;
  createdId: string | undefined;
  accepts: ((...types: string[]) => string | false) | undefined;
  runInLane: (<T>(work: () => Promise<T>) => Promise<T>) | undefined;
  onClose: ((fn: () => void) => void) | undefined;

  constructor(
    fields: InputFields<P, Q, B>,
    private readonly logs: LogSource,
  ) {
    this.params = fields.params;
    this.query = fields.query;
    this.body = fields.body;
    this.access = fields.access;
    this.path = fields.path;
    this.createdId = fields.createdId;
    this.accepts = fields.accepts;
    this.runInLane = fields.runInLane;
    this.onClose = fields.onClose;
  }

  /** The request's logger, made only when a handler logs. */
  get log(): Logger {
    return this.logs.log;
  }
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
   * Accepts an Idempotency-Key (extension) and passes `createdId` to its handler: a create makes
   * its record under that id and answers the existing record when that id already exists; a
   * status move stores it as the move's id and answers a move holding it as landed
   * (src/http/idempotency.ts).
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
 * A path's first segment below the API prefix, lower-cased: of a declared path (`/endpoint/{id}`
 * → `endpoint`) or of a request's (`/endpoint-control-service/v1/endpoint/e1` → `endpoint`;
 * undefined outside the prefix). The app's router and the door look a request's routes up by it,
 * so neither tests every route's pattern (docs/adr/0136-a-requests-framework-cpu.md); matching
 * is case-insensitive as @koa/router's.
 */
export function declaredSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

const PREFIX_LC = `${API_PREFIX.toLowerCase()}/`;

export function requestSegment(path: string): string | undefined {
  const start = PREFIX_LC.length;
  if (path.length <= start) return undefined;
  // The prefix as declared is the common case: no lower-cased copy of it.
  if (!path.startsWith(PREFIX_LC) && path.slice(0, start).toLowerCase() !== PREFIX_LC) return undefined;
  const end = path.indexOf('/', start);
  return (end === -1 ? path.slice(start) : path.slice(start, end)).toLowerCase();
}

/** Routes grouped by the first segment of their path. */
export function bySegment<R extends { path: string }>(routes: readonly R[]): Map<string, R[]> {
  const groups = new Map<string, R[]>();
  for (const r of routes) {
    const segment = declaredSegment(r.path);
    const group = groups.get(segment);
    if (group) group.push(r);
    else groups.set(segment, [r]);
  }
  return groups;
}

export { fastAcceptorOf, validatePart, withFastAccept, type FastAccept } from '../validation.js';

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
