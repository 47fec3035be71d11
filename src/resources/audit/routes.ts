/** The audit trail's one operation (extension): a page search. Events are never updated or deleted through the API. */
import Joi from 'joi';
import { WRITERS } from '../../access/principal.js';
import { defineRoute, ok, type RouteSpec } from '../../http/routes.js';
import { pageSchema, pagedCriteriaSchema } from '../../http/paging.js';
import type { PageRequest } from '../../domain.js';
import { id, isoDateOut, orgId } from '../../http/schemas.js';
import { AUDIT_SORT_FIELDS, type AuditService } from './service.js';
import { AUDIT_KINDS, type AuditSearchCriteria } from './model.js';

const instant = Joi.date()
  .iso()
  .min('1970-01-01T00:00:00.000Z')
  .max('9999-12-31T23:59:59.999Z')
  .custom((v: Date) => v.toISOString())
  .meta({ className: 'IsoDateTime' });

const criteria = Joi.object<AuditSearchCriteria>({
  from: instant.description('events at or after this time'),
  to: instant.description('events before this time'),
  actorTokenId: id.description("the calling token's id"),
  actorSubject: Joi.string().max(255).description("a person's subject at the identity provider"),
  actorEmail: Joi.string().max(255).description("a person's e-mail address, as the identity provider gave it"),
  operation: id.description('the operation id of the route called'),
  targetType: id.description('the kind of record named: endpoint, utm-endpoint, license, token, org, ...'),
  targetId: id,
  orgId: orgId.description("organization of the target (within the caller's subtree)"),
  includeChildren: Joi.boolean().default(false).description('with orgId: its whole subtree'),
  kind: Joi.string().valid(...AUDIT_KINDS),
  status: Joi.number().integer().min(100).max(599).description('the HTTP status answered'),
  requestId: Joi.string().max(128),
}).label('AuditSearchCriteria').meta({ className: 'AuditSearchCriteria' });

const auditEvent = Joi.object({
  id: Joi.string().required(),
  timestamp: isoDateOut.required(),
  kind: Joi.string()
    .valid(...AUDIT_KINDS)
    .required(),
  requestId: Joi.string().required(),
  operation: Joi.string().required(),
  method: Joi.string().required(),
  path: Joi.string().required(),
  status: Joi.number().integer().required(),
  actor: Joi.object({
    tokenId: Joi.string(),
    name: Joi.string(),
    role: Joi.string(),
    orgId: Joi.string(),
    address: Joi.string().description("the client's address: the connection's peer, or the client a trusted reverse proxy names in X-Forwarded-For"),
    subject: Joi.string().description("a person's subject at the identity provider"),
    email: Joi.string(),
    issuer: Joi.string().description('the identity provider (its issuer URL)'),
  })
    .required()
    .label('AuditActor').meta({ className: 'AuditActor' }),
  target: Joi.object({ type: Joi.string(), id: Joi.string(), orgId: Joi.string() }).required().label('AuditTarget').meta({ className: 'AuditTarget' }),
  details: Joi.object()
    .unknown(true)
    .description("what the operation records besides who, what and which: a job's criteria, allAgents, matched (agents matching when it was created) and confirmedBy"),
  reason: Joi.string().description('why a login session ended or a sign-in was refused'),
}).label('AuditEvent').meta({ className: 'AuditEvent' });

export function auditRoutes(svc: AuditService): RouteSpec[] {
  return [
    defineRoute<
      Record<string, never>,
      Record<string, never>,
      { criteria: AuditSearchCriteria; pageRequest: PageRequest }
    >({
      operationId: 'searchAuditEvents',
      method: 'POST',
      path: '/audit/search-page',
      summary:
        "Audit events (writes made with a token or a login session, 401/403 refusals, sign-ins and sign-outs) matching every given criteria field, paged (default: newest first); an admin sees the events whose target is in its organization's subtree",
      tag: 'audit',
      lane: 'interactive',
      sec: true,
      roles: WRITERS,
      extension: true,
      body: pagedCriteriaSchema(criteria, Object.keys(AUDIT_SORT_FIELDS), 'PagedAuditSearchCriteria').required(),
      responses: { 200: { description: 'OK', schema: pageSchema(auditEvent, 'AuditEventPage') } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok(await svc.search(body.criteria, body.pageRequest, access)),
    }),
  ];
}
