/**
 * The router that mounts the route declarations (src/http/routes.ts): for each operation,
 * authentication and roles, its admission lane, validation of path, query and body, the
 * idempotency key, the handler, and the reply written back.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { admits, ANONYMOUS, callerKey, type Principal } from '../access/principal.js';
import { TOKEN_HEADER, type Authenticator } from './auth.js';
import type { OrgTree } from '../access/access.js';
import { sessionOf, sessionSecretOf } from './sso.js';
import type { LoginSessions } from '../resources/sessions/model.js';
import { ClientClosedError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { idempotencyKeyOf, type Idempotency } from './idempotency.js';
import type { Logger } from '../log.js';
import type { Admission } from './admission.js';
import { accessFor } from './audit.js';
import { API_PREFIX, bySegment, fastAcceptorOf, koaPath, RequestInput, validatePart, type LogSource, type Reply, type RouteSpec } from './routes.js';

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
  /** Login sessions (single sign-on configured): a request without a token may carry the session cookie. */
  sessions?: { service: LoginSessions; publicOrigin: string };
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
  try {
    await parse(ctx, async () => {});
  } catch (err) {
    // The client closed its connection before the body was read (docs/adr/0150-a-request-its-client-gave-up-on.md).
    if (clientGone(ctx.req) || (err as { type?: unknown }).type === 'request.aborted') throw new ClientClosedError();
    throw err;
  }
  return (ctx.request as { body?: unknown }).body;
}

/** True when the request's stream was torn down before it ended: its connection closed mid-request. */
function clientGone(req: IncomingMessage): boolean {
  return req.destroyed && !req.readableEnded;
}

/** Authenticates and admits the principal for one route: 401/403 decisions for roles. */
async function admit(ctx: Koa.Context, spec: RouteSpec, deps: MountDeps): Promise<Principal> {
  const secret = tokenFrom(ctx);
  const required = spec.sec || deps.requireTokenEverywhere;
  if (!secret && !required) return ANONYMOUS;
  // The client's address as the trusted proxies name it (src/http/client-address.ts).
  // A token always wins; without one, a person's login session (cross-site rules applied in sessionOf).
  const cookie = secret === undefined && deps.sessions ? sessionSecretOf(ctx) : undefined;
  const principal =
    cookie !== undefined && deps.sessions
      ? (await sessionOf(ctx, cookie, deps.sessions.service, deps.sessions.publicOrigin)).principal
      : await deps.authenticator.authenticate(secret, String(ctx.state.clientAddress ?? ctx.ip));
  // Known before the role check, so a refusal names its caller in the access log and the audit trail.
  ctx.state.principal = principal;
  if (!admits(spec.roles, principal)) {
    throw new ForbiddenError(
      principal.grants
        ? `none of your grants (${principal.grants.map((g) => g.role).join(', ')}) may call ${spec.operationId}`
        : `role ${principal.role} may not call ${spec.operationId}`,
    );
  }
  deps.limitRate?.(principal);
  return principal;
}

/** Writes a reply into the Koa response: status, headers and the body in its content type. */
function present(ctx: Koa.Context, reply: Reply): void {
  ctx.state.replyBody = reply.body;
  ctx.state.auditDetails = reply.audit;
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
    // The type before the body: Koa then neither sniffs a string body's type nor sets it twice.
    ctx.type = reply.contentType ?? 'application/json';
    ctx.body = reply.contentType?.startsWith('text/') ? String(reply.body) : JSON.stringify(reply.body);
  }
}

/** The API's routes by the first segment of a request's path below the prefix (`requestSegment`). */
export type ApiRouter = (segment: string) => Koa.Middleware | undefined;

/**
 * Mounts the declarations under the API prefix: one router per first path segment, chosen by a
 * map lookup, so a request is matched against its own resource's routes rather than every
 * route's pattern in turn (3.4 % of a count's CPU before; docs/adr/0136-a-requests-framework-cpu.md).
 * Matching stays @koa/router's: case-insensitive, 405 with Allow for a known path's other methods.
 */
export function buildRouter(routes: RouteSpec[], deps: MountDeps): ApiRouter {
  const mounted = new Map<string, Koa.Middleware>();
  for (const [segment, specs] of bySegment(routes)) {
    const router = mountRoutes(specs, deps);
    // The router's own middleware adds `params` and `router` to the context it is given.
    const matched = router.routes() as unknown as Koa.Middleware;
    const allowed = router.allowedMethods() as unknown as Koa.Middleware;
    mounted.set(segment, (ctx, next) => matched(ctx, () => allowed(ctx, next)));
  }
  return (segment) => mounted.get(segment);
}

function mountRoutes(routes: RouteSpec[], deps: MountDeps): Router {
  const router = new Router({ prefix: API_PREFIX });
  for (const spec of routes) {
    // Each part's validation is compiled at mount, not by the first request (docs/adr/0138-validation-compiled-once.md).
    for (const part of [spec.params, spec.query, spec.body]) if (part) fastAcceptorOf(part);
    const method = spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](spec.operationId, koaPath(spec.path), async (ctx) => {
      ctx.state.operationId = spec.operationId;
      ctx.state.lane = spec.lane;
      const principal = await admit(ctx, spec, deps);
      ctx.state.principal = principal;
      // The lane decides right after authentication, before the body is read and validated, so a
      // shed request costs as little as it can; the whole operation (an idempotent one's key
      // claim and outcome too) runs inside its lane.
      const access = accessFor(ctx, principal, deps.orgs, spec.roles);
      const runInLane = <T>(work: () => Promise<T>): Promise<T> => deps.admission.run(spec.lane, callerKey(principal), work);
      const accepts = (...types: string[]): string | false => ctx.accepts(...types);
      const onClose = (fn: () => void): void => void ctx.res.once('close', fn);
      const reply: Reply = await deps.admission.run(spec.lane, callerKey(principal), async () => {
        const params = validateParams(spec, ctx.params);
        const query = validatePart<unknown>(spec.query, ctx.query, 'query', true);
        const body = validatePart<unknown>(spec.body, await requestBody(ctx, spec, deps.parseBody), 'body');
        const key = spec.idempotent ? idempotencyKeyOf(ctx) : undefined;
        const run = (createdId?: string): Promise<Reply> =>
          spec.handler(
            // The request's logger is made on first use (src/http/observe.ts): most handlers never log.
            new RequestInput({ params, query, body, access, path: ctx.path, createdId, accepts, runInLane, onClose }, ctx.state as LogSource),
          );
        return key === undefined
          ? run()
          : deps.idempotency.run({ principal, method: spec.method, path: ctx.path, key, request: { query, body } }, run);
      });
      if (reply.hold) {
        // Held outside the lane and the request time-out (src/http/limits.ts): a held answer costs a slot of neither.
        (ctx.state.untimed as (() => void) | undefined)?.();
        // Not awaited here: this frame (the operation's input, access and lane closures) is let go
        // while the answer is held; only the hold's own promise and the request stay.
        return reply.hold().then((held) => present(ctx, held));
      }
      present(ctx, reply);
    });
  }
  return router;
}
