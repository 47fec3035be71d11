/**
 * The audit hook: one middleware beside the router that turns every write made
 * with a token or a login session, and every 401/403 refusal, into an audit event, counts the agents' telemetry
 * instead of auditing it, and notes each token's last use.
 *
 * What is a write: an operation of the `admin` lane (the administrative writes; every other
 * write is agent telemetry in the `agent` and `report` lanes), or one declaring `audited: true`. A write
 * answered 2xx is answered only once its event is durable in the store (AuditSink.record,
 * group-committed); every other event is handed over without waiting (AuditSink.offer).
 *
 * The target is derived from the declaration and the request: its type from the path (the
 * segment before the first parameter), its id from the first path parameter (else the id of
 * the record created or named in the body), its organization from the organization the
 * service checked through Access (the one deciding 403), else the one the request named.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import type Koa from 'koa';
import { Counter, type Registry } from 'prom-client';
import { Access, type OrgTree } from '../access/access.js';
import type { Principal, Role } from '../access/principal.js';
import { TELEMETRY_LANES } from '../lanes.js';
import { paramKey, type RouteSpec } from './routes.js';
import { asAppError, type ErrorTranslator } from './observe.js';
import type { AuditActor, AuditEvent, AuditKind, AuditTarget } from '../resources/audit/model.js';

/** Where events go (src/resources/audit/service.ts). */
export interface AuditSink {
  /** Resolves once the event is durable; rejects (503) when it could not be stored. */
  record(event: AuditEvent): Promise<void>;
  /** Hands the event over without waiting; 'dropped' beyond the sink's rate or backlog bound. */
  offer(event: AuditEvent): 'queued' | 'dropped';
}

/** Notes a token's use; true when it started a (coarse) last-use write. */
export interface TokenUse {
  recordUse(tokenId: string): boolean;
}

/**
 * The Access a request's handler receives, remembering which organizations the service
 * checked: the first one checked, and the one that was refused. That is the target's
 * organization, decided by the service's own rule, without every handler reporting it.
 */
export class AuditedAccess extends Access {
  checkedOrg: string | undefined;
  refusedOrg: string | undefined;

  override async assertOrg(orgId: string): Promise<void> {
    this.checkedOrg ??= orgId;
    try {
      await super.assertOrg(orgId);
    } catch (err) {
      this.refusedOrg ??= orgId;
      throw err;
    }
  }
}

/** The Access for one request, kept in ctx.state for the audit hook. */
export function accessFor(ctx: Koa.Context, principal: Principal, orgs: OrgTree, admitted?: readonly Role[]): Access {
  const access = new AuditedAccess(principal, orgs, admitted);
  ctx.state.access = access;
  return access;
}

/** True for operations whose calls are audited as writes. */
export function isAuditedWrite(spec: RouteSpec): boolean {
  return spec.audited ?? spec.lane === 'admin';
}

/** Path segments naming a kind of record, by the name the audit trail gives it. */
const TARGET_TYPES: Readonly<Record<string, string>> = {
  tokens: 'token',
  jobs: 'job',
  rollouts: 'rollout',
  organizations: 'organization',
  bundles: 'bundle',
  'org-config': 'org',
  'by-org-id': 'org',
  serial: 'utm-endpoint',
  'vendor-network': 'utm-endpoint',
  imei: 'lte-endpoint',
};

const MAX_FIELD = 256;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' && v.length <= MAX_FIELD ? v : undefined;
}

function field(obj: unknown, name: string): string | undefined {
  return obj !== null && typeof obj === 'object' && !Array.isArray(obj)
    ? text((obj as Record<string, unknown>)[name])
    : undefined;
}

/** Type and id of the record an operation names, from its declaration and the request. */
export function deriveTarget(
  spec: RouteSpec,
  params: Record<string, string>,
  body: unknown,
  reply: unknown,
): { type: string; id?: string; namedOrg?: string } {
  const segments = spec.path.split('/').filter(Boolean);
  const path = segments[0] === 'admin' ? segments.slice(1) : segments;
  const p = path.findIndex((s) => s.startsWith('{'));
  const segment = (p > 0 ? path[p - 1] : path[0]) ?? 'service';
  const type = TARGET_TYPES[segment] ?? segment;
  const id =
    (p >= 0 ? text(params[paramKey(path[p].slice(1, -1))]) : undefined) ??
    field(reply, 'id') ??
    field(body, 'id') ??
    field(body, 'endpointId') ??
    field(body, 'orgId');
  const namedOrg =
    (type === 'org' || type === 'organization' ? id : undefined) ??
    field(reply, 'orgId') ??
    field(body, 'orgId') ??
    text(params.orgId);
  return { type, ...(id !== undefined ? { id } : {}), ...(namedOrg !== undefined ? { namedOrg } : {}) };
}

export interface AuditTrailDeps {
  routes: RouteSpec[];
  audit: AuditSink;
  tokens: TokenUse;
  registry: Registry;
  translate: ErrorTranslator;
}

/** The middleware; mounted inside the error handler, outside the router. */
export function auditTrail(deps: AuditTrailDeps): Koa.Middleware {
  const byOperation = new Map(deps.routes.map((r) => [r.operationId, r] as const));
  const telemetry = new Counter({
    name: 'ecs_agent_telemetry_total',
    help: 'Agent telemetry calls (the agent and report lanes: connect, disconnect, inventory, heartbeats, ...), counted instead of audited, by operation and status',
    labelNames: ['operation', 'status'],
    registers: [deps.registry],
  });
  const events = new Counter({
    name: 'ecs_audit_events_total',
    help: 'Audit events by kind and delivery (awaited: a write answered after its event was stored; queued: handed over; dropped: beyond the rate or backlog bound)',
    labelNames: ['kind', 'delivery'],
    registers: [deps.registry],
  });
  const lastUseWrites = new Counter({
    name: 'ecs_token_last_use_writes_total',
    help: "Writes of a token's lastUsedAt (at most one a minute per token and instance)",
    registers: [deps.registry],
  });

  return async (ctx, next) => {
    let error: unknown;
    try {
      await next();
    } catch (err) {
      error = err;
    }
    const spec = byOperation.get(ctx.state.operationId as string);
    if (spec) {
      const status = error === undefined ? ctx.status : (asAppError(error, deps.translate)?.status ?? 500);
      const principal = ctx.state.principal as Principal | undefined;
      if (principal?.tokenId && deps.tokens.recordUse(principal.tokenId)) lastUseWrites.inc();
      if (TELEMETRY_LANES.has(spec.lane)) telemetry.inc({ operation: spec.operationId, status: String(status) });
      const refusal = status === 401 || status === 403;
      const write = isAuditedWrite(spec) && principal !== undefined && principal.role !== 'agent';
      if (refusal || write) {
        const event = buildEvent(ctx, spec, refusal ? 'REFUSAL' : 'WRITE', status, principal);
        if (error === undefined && status >= 200 && status < 300) {
          // The write is acknowledged only with its event: a failure here answers 503 instead.
          await deps.audit.record(event);
          events.inc({ kind: event.kind, delivery: 'awaited' });
        } else {
          events.inc({ kind: event.kind, delivery: deps.audit.offer(event) });
        }
      }
    }
    if (error !== undefined) throw error;
  };
}

/** The audit actor of a principal: a token by its id, a person by the identity provider's subject, e-mail, name and issuer. */
export function actorOf(principal: Principal): AuditActor {
  const person = principal.person;
  return {
    ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
    name: principal.name,
    role: principal.role,
    ...(principal.orgId ? { orgId: principal.orgId } : {}),
    ...(person ? { subject: person.subject, issuer: person.issuer, ...(person.email ? { email: person.email } : {}) } : {}),
  };
}

function buildEvent(
  ctx: Koa.Context,
  spec: RouteSpec,
  kind: AuditKind,
  status: number,
  principal: Principal | undefined,
): AuditEvent {
  const access = ctx.state.access as AuditedAccess | undefined;
  const derived = deriveTarget(
    spec,
    (ctx.params ?? {}) as Record<string, string>,
    (ctx.request as { body?: unknown }).body,
    ctx.state.replyBody,
  );
  // An organization the service checked is the target's; one the request only named counts too.
  // A successful write whose target names none is the caller's own organization's.
  const orgId =
    access?.refusedOrg ??
    access?.checkedOrg ??
    derived.namedOrg ??
    (status < 300 && principal?.role !== 'system' ? principal?.orgId : undefined);
  const target: AuditTarget = {
    type: derived.type,
    ...(derived.id ? { id: derived.id } : {}),
    ...(orgId ? { orgId } : {}),
  };
  // The client's address as the trusted proxies name it (src/http/client-address.ts).
  const address = typeof ctx.state.clientAddress === 'string' && net.isIP(ctx.state.clientAddress) !== 0 ? { address: ctx.state.clientAddress } : {};
  const actor = principal === undefined ? address : { ...actorOf(principal), ...address };
  return {
    id: crypto.randomUUID(),
    timestamp: new Date().toISOString(),
    kind,
    requestId: String(ctx.state.requestId ?? ''),
    operation: spec.operationId,
    method: ctx.method,
    path: ctx.path,
    status,
    actor,
    target,
    ...(ctx.state.auditDetails ? { details: ctx.state.auditDetails as Record<string, unknown> } : {}),
  };
}
