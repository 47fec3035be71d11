/**
 * Route declarations and the router that mounts them. A declaration carries everything
 * that describes an operation (method, path, summary, tag, security, roles, request and
 * response schemas); the router, the OpenAPI document and the tenant-isolation tests are
 * all derived from the same declarations.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import Joi from 'joi';
import { ANONYMOUS, TOKEN_HEADER, type Access, type Authenticator, type OrgTree, type Principal, type Role } from './auth.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { idempotencyKeyOf, type Idempotency } from './idempotency.js';
import type { Logger } from '../log.js';
import type { Admission, Lane } from './admission.js';
import { accessFor } from './audit.js';
import type { DeepSearch } from './deep-paging.js';
import { Readable } from 'node:stream';

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
}

export interface Reply {
  status: number;
  /** A Readable is streamed as is (exports, src/http/deep-paging.ts). */
  body?: unknown;
  /** Set for non-JSON bodies (text/plain). */
  contentType?: string;
  headers?: Record<string, string>;
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
   * Audit trail (issue 16, src/http/audit.ts): calls are audited as writes; unset, exactly the
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
   * Extension (issue 16): a page search's deep read, the same search as the handler's prepared
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

const joiOptions: Joi.ValidationOptions = {
  abortEarly: false,
  convert: true,
  stripUnknown: { objects: true, arrays: false },
  errors: { wrap: { label: false } },
};

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

/** Validates one part of a request; a 400 names every offending field. */
export function validatePart<T>(schema: Joi.Schema | undefined, value: unknown, where: string): T {
  if (!schema) return value as T;
  const fast = fastAcceptors.get(schema)?.(value);
  if (fast !== undefined) return fast as T;
  const { value: out, error } = schema.validate(value, joiOptions);
  if (error) {
    const msg = error.details
      .map((d) => {
        const field = [where, ...d.path.map(String)].join('.');
        return `${field}: ${d.message}`;
      })
      .join('; ');
    throw new ValidationError(msg);
  }
  return out as T;
}

export interface MountDeps {
  authenticator: Authenticator;
  orgs: OrgTree;
  requireTokenEverywhere: boolean;
  /** Per-token rate limiting, when configured. */
  limitRate?: (principal: Principal) => void;
  /** Lanes in front of the store: every handler runs inside its declared lane. */
  admission: Admission;
  /** JSON body parser, run only for operations that declare a body (after authentication). */
  parseBody: Koa.Middleware;
  /** Runs `idempotent` operations called with an Idempotency-Key. */
  idempotency: Idempotency;
}

function tokenFrom(ctx: Koa.Context): string | undefined {
  const v = ctx.get(TOKEN_HEADER);
  return v === '' ? undefined : v;
}

/**
 * Path parameters. An operation whose declared errors have no 400 answers 404 for a value
 * that cannot name anything (the spec's "the resource referred to by id does not exist").
 */
function validateParams(spec: RouteSpec, raw: unknown): unknown {
  try {
    return validatePart<unknown>(spec.params, raw, 'path');
  } catch (err) {
    if (err instanceof ValidationError && !spec.errors.includes(400) && spec.errors.includes(404)) {
      throw new NotFoundError(`no such resource: ${err.message}`);
    }
    throw err;
  }
}

/** True when the request carries body bytes. */
function hasBody(ctx: Koa.Context): boolean {
  return (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '';
}

/**
 * The parsed JSON body, or undefined when none was sent (so joi's `required()` and defaults
 * apply). A body in another content type is a 400: the spec's bodies are JSON.
 */
async function requestBody(ctx: Koa.Context, spec: RouteSpec, parse: Koa.Middleware): Promise<unknown> {
  if (!spec.body || !hasBody(ctx)) return undefined;
  const expected = spec.bodyContentType ?? 'application/json';
  if (!ctx.is(expected, 'application/json', '+json')) {
    throw new ValidationError(`body: content type must be ${expected}, got ${ctx.get('content-type') || 'none'}`);
  }
  await parse(ctx, async () => {});
  return (ctx.request as { body?: unknown }).body;
}

/** Authenticates and admits the principal for one route: 401/403 decisions for roles. */
async function admit(ctx: Koa.Context, spec: RouteSpec, deps: MountDeps): Promise<Principal> {
  const secret = tokenFrom(ctx);
  const required = spec.sec || deps.requireTokenEverywhere;
  if (!secret && !required) return ANONYMOUS;
  const principal = await deps.authenticator.authenticate(secret, ctx.ip);
  // Known before the role check, so a refusal names its caller in the access log and the audit trail.
  ctx.state.principal = principal;
  if (principal.role !== 'system' && !spec.roles.includes(principal.role as Role)) {
    throw new ForbiddenError(`role ${principal.role} may not call ${spec.operationId}`);
  }
  deps.limitRate?.(principal);
  return principal;
}

/** Mounts the declarations on a router under the API prefix. */
export function buildRouter(routes: RouteSpec[], deps: MountDeps): Router {
  const router = new Router({ prefix: API_PREFIX });
  for (const spec of routes) {
    const method = spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](spec.operationId, koaPath(spec.path), async (ctx) => {
      ctx.state.operationId = spec.operationId;
      const principal = await admit(ctx, spec, deps);
      ctx.state.principal = principal;
      // The lane decides right after authentication, before the body is read and validated, so a
      // shed request costs as little as it can; the whole operation (an idempotent one's key
      // claim and outcome too) runs inside its lane.
      const access = accessFor(ctx, principal, deps.orgs);
      const runInLane = <T>(work: () => Promise<T>): Promise<T> => deps.admission.run(spec.lane, principal.tokenId, work);
      const accepts = (...types: string[]): string | false => ctx.accepts(...types);
      const reply: Reply = await deps.admission.run(spec.lane, principal.tokenId, async () => {
        const params = validateParams(spec, ctx.params);
        const query = validatePart<unknown>(spec.query, ctx.query, 'query');
        const body = validatePart<unknown>(spec.body, await requestBody(ctx, spec, deps.parseBody), 'body');
        const key = spec.idempotent ? idempotencyKeyOf(ctx) : undefined;
        const run = (createdId?: string): Promise<Reply> =>
          spec.handler({ params, query, body, access, log: ctx.state.log as Logger, path: ctx.path, createdId, accepts, runInLane });
        return key === undefined
          ? run()
          : deps.idempotency.run({ principal, method: spec.method, path: ctx.path, key, request: { query, body } }, run);
      });
      ctx.state.replyBody = reply.body;
      if (reply.body === undefined) {
        // "No body" means an empty one: without this Koa writes the reason phrase ("Created", "OK").
        // Koa turns a null body into 204, so the status is set after it.
        ctx.body = null;
      }
      ctx.status = reply.status;
      for (const [k, v] of Object.entries(reply.headers ?? {})) ctx.set(k, v);
      if (reply.body instanceof Readable) {
        const stream = reply.body;
        ctx.type = reply.contentType ?? 'application/octet-stream';
        // A stream that fails after its first byte cannot change the status: the connection is cut,
        // so the client sees a truncated transfer instead of a response that never ends.
        stream.once('error', (err) => {
          (ctx.state.log as Logger).error({ err }, 'streamed answer failed');
          ctx.res.destroy();
        });
        ctx.body = stream;
      } else if (reply.body !== undefined) {
        if (reply.contentType) ctx.type = reply.contentType;
        ctx.body = reply.contentType?.startsWith('text/') ? String(reply.body) : JSON.stringify(reply.body);
        if (!reply.contentType) ctx.type = 'application/json';
      }
    });
  }
  return router;
}
