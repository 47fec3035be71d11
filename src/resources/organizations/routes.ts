/** Admin operations on organizations (beyond the spec; system role only). */
import Joi from 'joi';
import { SYSTEM_ONLY } from '../../access/principal.js';
import { routeDefaults, created, ok, type RouteSpec } from '../../http/routes.js';
import { id, isoDateOut, serverOwnedField } from '../../http/schemas.js';
import type { OrganizationService, OrganizationUpdate } from './service.js';

const organization = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  parentId: Joi.string(),
  createdAt: isoDateOut,
}).label('Organization').meta({ className: 'Organization' });

const createBody = Joi.object({
  id: id.required(),
  name: Joi.string().trim().min(1).max(256).required(),
  parentId: id,
  createdAt: serverOwnedField(isoDateOut),
})
  .required()
  .label('OrganizationCreate').meta({ className: 'NewOrganization' });

const updateBody = Joi.object({
  name: Joi.string().trim().min(1).max(256),
  parentId: id.allow(null).description('the new parent; null makes the organization a root'),
  // A record as read may be sent back: its id (the path names the organization) and createdAt are ignored.
  id: serverOwnedField(Joi.string()),
  createdAt: serverOwnedField(isoDateOut),
})
  .min(1)
  .required()
  .label('OrganizationUpdate').meta({ className: 'OrganizationUpdate' });

const moveStatus = Joi.object({
  orgId: Joi.string().required(),
  fromParentId: Joi.string().description('the parent before the move (absent: it was a root)'),
  toParentId: Joi.string().description('the parent after the move (absent: it became a root)'),
  state: Joi.string().valid('RUNNING', 'DONE').required().description('RUNNING while records below the organization are being given their new ancestry'),
  recordsRewritten: Joi.number().integer().min(0).required(),
  recordsRemaining: Joi.number().integer().min(0).required().description('records still showing the old place, counted now'),
  startedAt: isoDateOut.required(),
  finishedAt: isoDateOut,
})
  .label('OrganizationMoveStatus')
  .meta({ className: 'OrganizationMoveStatus' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'admin', sec: true, roles: SYSTEM_ONLY, errors: [400, 401, 403, 404, 409] });

export function organizationRoutes(orgs: OrganizationService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, { id: string; name: string; parentId?: string }>({
      operationId: 'createOrganization',
      method: 'POST',
      path: '/admin/organizations',
      summary: 'Register an organization (optionally below a parent)',
      lane: 'admin',
      extension: true,
      body: createBody,
      responses: { 201: { description: 'Created', schema: organization } },
      handler: async ({ body, access }) => created(await orgs.create(body, access)),
    }),
    route<{ id: string }>({
      operationId: 'getOrganization',
      method: 'GET',
      path: '/admin/organizations/{id}',
      summary: 'Read an organization',
      lane: 'interactive',
      extension: true,
      params: Joi.object({ id: id.required() }),
      responses: { 200: { description: 'OK', schema: organization } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await orgs.get(params.id, access)),
    }),
    route<{ id: string }, Record<string, never>, OrganizationUpdate>({
      operationId: 'updateOrganization',
      method: 'PATCH',
      path: '/admin/organizations/{id}',
      summary: 'Rename an organization and/or move it below another parent (its subtree moves with it)',
      lane: 'admin',
      extension: true,
      params: Joi.object({ id: id.required() }),
      body: updateBody,
      responses: { 200: { description: 'OK', schema: organization } },
      handler: async ({ params, body }) => ok(await orgs.update(params.id, body)),
    }),
    route<{ id: string }>({
      operationId: 'getOrganizationMove',
      method: 'GET',
      path: '/admin/organizations/{id}/move',
      summary: "Progress of the organization's last move: the background rewrite of the records below it",
      lane: 'interactive',
      extension: true,
      params: Joi.object({ id: id.required() }),
      responses: { 200: { description: 'OK', schema: moveStatus } },
      errors: [400, 401, 403, 404],
      handler: async ({ params }) => ok(await orgs.moveStatus(params.id)),
    }),
  ];
}
