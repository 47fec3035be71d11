/** Admin operations on tokens (beyond the spec; system role only). */
import Joi from 'joi';
import { ROLES, SYSTEM_ONLY } from '../../access/principal.js';
import { routeDefaults, created, noContent, ok, type RouteSpec } from '../../http/routes.js';
import { id, isoDateOut, userKey } from '../../http/schemas.js';
import type { TokenCreate, TokenService } from './service.js';

const tokenCreate = Joi.object({
  name: Joi.string().trim().min(1).max(256).required(),
  orgId: id,
  role: Joi.string()
    .valid(...ROLES)
    .required(),
  endpointId: id,
  expiresAt: Joi.date()
    .iso()
    .greater('now')
    .meta({ className: 'TokenExpiry' })
    .description('When the token stops being accepted: an ISO 8601 date-time, or a date alone (its midnight UTC); in the future'),
})
  .required()
  .label('TokenCreate').meta({ className: 'NewToken' });

/** The fields a token answers wherever it is shown (never its hash). */
const tokenFields = {
  id: Joi.string().required(),
  name: Joi.string().required(),
  orgId: Joi.string(),
  role: Joi.string().valid(...ROLES),
  endpointId: Joi.string(),
  expiresAt: isoDateOut,
};

const issued = Joi.object({
  ...tokenFields,
  createdAt: isoDateOut,
  token: Joi.string().required().description('the secret, shown once'),
}).label('IssuedToken').meta({ className: 'IssuedToken' });

/** A token record (extension): never its secret. */
const tokenView = Joi.object({
  ...tokenFields,
  revoked: Joi.boolean().required(),
  createdAt: isoDateOut,
  createdBy: userKey,
  lastUsedAt: isoDateOut.description('last use, coarse: written at most once a minute per token and instance'),
  revokedAt: isoDateOut,
  revokedBy: userKey,
  revokedReason: Joi.string(),
}).label('Token').meta({ className: 'Token' });
/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'admin', sec: true, roles: SYSTEM_ONLY, errors: [400, 401, 403, 404] });

export function tokenRoutes(tokens: TokenService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, TokenCreate>({
      operationId: 'createToken',
      method: 'POST',
      path: '/admin/tokens',
      summary: 'Mint a token; the secret is in the response once',
      lane: 'admin',
      extension: true,
      body: tokenCreate,
      responses: { 201: { description: 'Created', schema: issued } },
      handler: async ({ body, access }) => created(await tokens.create(body, access)),
    }),
    route<{ id: string }>({
      operationId: 'revokeToken',
      method: 'DELETE',
      path: '/admin/tokens/{id}',
      summary: 'Revoke a token',
      lane: 'admin',
      extension: true,
      params: Joi.object({ id: id.required() }),
      responses: { 204: { description: 'Revoked' } },
      handler: async ({ params, access }) => {
        await tokens.revoke(params.id, access);
        return noContent();
      },
    }),
    route<{ id: string }>({
      operationId: 'getToken',
      method: 'GET',
      path: '/admin/tokens/{id}',
      summary: 'A token record (never its secret): its last use and, once revoked, who revoked it and when',
      lane: 'interactive',
      extension: true,
      params: Joi.object({ id: id.required() }),
      responses: { 200: { description: 'OK', schema: tokenView } },
      handler: async ({ params }) => ok(await tokens.get(params.id)),
    }),
  ];
}
