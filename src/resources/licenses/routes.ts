/** Spec 4.7: licenses. */
import Joi from 'joi';
import { READERS, WRITERS } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { countWrapper, id, idParams, isoDateOut, orgId, serverOwnedField } from '../../http/schemas.js';
import { LICENSE_STATES, LICENSE_TYPES, type LicenseState } from './model.js';
import type { LicenseCriteria, LicenseInput, LicenseService } from './service.js';

const licenseState = Joi.string().valid(...LICENSE_STATES);
const licenseType = Joi.string().valid(...LICENSE_TYPES);
const serverDate = serverOwnedField(isoDateOut).description('server-owned: stamped at creation and by state changes');

const licenseInfoIn = Joi.object({
  id: id.description('must match the path when given'),
  state: licenseState.description('must equal the current state (CREATED for a new license); change it with PATCH'),
  type: licenseType.required(),
  orgId: orgId.required(),
  ownerId: Joi.string().trim().max(256),
  daysInactiveBeforeDeactivation: Joi.number().integer().min(0).max(2_147_483_647),
  version: Joi.number().integer().min(0).description('the version read; a stale one answers 409'),
  creationDate: serverDate,
  activationDate: serverDate,
  expirationDate: serverDate,
  lastActiveDate: serverDate,
  revocationDate: serverDate,
  deactivationDate: serverDate,
})
  .required()
  .label('LicenseInfo').meta({ className: 'LicenseInfoInput' });

export const licenseInfo = Joi.object({
  id: Joi.string().required(),
  state: licenseState.required(),
  type: licenseType.required(),
  creationDate: isoDateOut.required(),
  activationDate: isoDateOut,
  expirationDate: isoDateOut,
  lastActiveDate: isoDateOut,
  revocationDate: isoDateOut,
  deactivationDate: isoDateOut,
  orgId: Joi.string().required(),
  ownerId: Joi.string(),
  daysInactiveBeforeDeactivation: Joi.number().integer(),
  version: Joi.number().integer().min(1).required(),
}).label('LicenseInfo').meta({ className: 'LicenseInfo' });

const licenseCriteria = Joi.object({
  id,
  state: licenseState,
  type: licenseType,
  orgId,
  ownerId: Joi.string().trim().max(256),
  daysInactiveBeforeDeactivation: Joi.number().integer().min(0),
  version: Joi.number().integer().min(0),
})
  .default({})
  .label('LicenseCriteria').meta({ className: 'LicenseCriteria' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'licenses', sec: true, roles: READERS, errors: [400, 401, 403, 404, 409, 500] });

export function licenseRoutes(svc: LicenseService): RouteSpec[] {
  return [
    route<{ id: string }>({
      operationId: 'getLicense',
      method: 'GET',
      path: '/license/{id}',
      summary: 'Read a license',
      lane: 'interactive',
      params: idParams,
      responses: { 200: { description: 'OK', schema: licenseInfo } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.get(params.id, access)),
    }),
    route<{ id: string }, Record<string, never>, LicenseInput>({
      operationId: 'putLicense',
      method: 'PUT',
      path: '/license/{id}',
      summary: 'Create or replace a license (its state changes only through PATCH; a stale version answers 409)',
      lane: 'admin',
      roles: WRITERS,
      params: idParams,
      body: licenseInfoIn,
      responses: { 200: { description: 'OK', schema: licenseInfo } },
      handler: async ({ params, body, access }) => ok(await svc.put(params.id, body, access)),
    }),
    route<{ id: string; licenseState: LicenseState }>({
      operationId: 'patchLicenseState',
      method: 'PATCH',
      path: '/license/{id}/state/{licenseState}',
      summary: 'Move a license to another state (409 for a move the state machine does not allow)',
      lane: 'admin',
      roles: WRITERS,
      params: Joi.object({ id: id.required(), licenseState: licenseState.required() }),
      responses: { 200: { description: 'OK', schema: licenseInfo } },
      handler: async ({ params, access }) => ok(await svc.changeState(params.id, params.licenseState, access)),
    }),
    route<Record<string, never>, Record<string, never>, LicenseCriteria>({
      operationId: 'countLicenses',
      method: 'POST',
      path: '/license/count',
      summary: 'Count the licenses matching every given criterion',
      lane: 'heavy',
      body: licenseCriteria,
      responses: { 200: { description: 'OK', schema: countWrapper } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok({ count: await svc.count(body, access) }),
    }),
  ];
}
