/** Spec 4.6: the bundle catalogue, plus the admin operation that adds or replaces a bundle. */
import Joi from 'joi';
import { READERS, SYSTEM_ONLY, type Role } from '../../http/auth.js';
import { defineRoute, ok, type RouteSpec } from '../../http/routes.js';
import { idParams } from '../../http/schemas.js';
import { MODULE_NAMES, type Bundle } from '../modules/model.js';
import { bundleFields, type BundleService } from './service.js';

export const bundleSchema = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  modules: Joi.array()
    .items(Joi.string().valid(...MODULE_NAMES))
    .required(),
}).label('Bundle');

const bundleIn = Joi.object({ ...bundleFields, id: bundleFields.id.optional() })
  .required()
  .label('Bundle');

const ALL: readonly Role[] = [...READERS, 'agent'];

export function bundleRoutes(svc: BundleService): RouteSpec[] {
  return [
    defineRoute({
      operationId: 'listBundles',
      method: 'GET',
      path: '/bundle',
      summary: 'The bundle catalogue',
      tag: 'modules',
      lane: 'interactive',
      sec: true,
      roles: ALL,
      responses: { 200: { description: 'OK', schema: Joi.array().items(bundleSchema) } },
      errors: [401, 403],
      handler: async () => ok(await svc.list()),
    }),
    defineRoute<{ id: string }>({
      operationId: 'getBundle',
      method: 'GET',
      path: '/bundle/{id}',
      summary: 'One bundle of the catalogue',
      tag: 'modules',
      lane: 'interactive',
      sec: true,
      roles: ALL,
      params: idParams,
      responses: { 200: { description: 'OK', schema: bundleSchema } },
      errors: [400, 401, 403, 404],
      handler: async ({ params }) => ok(await svc.get(params.id)),
    }),
    defineRoute<{ id: string }, Record<string, never>, Omit<Bundle, 'id'> & { id?: string }>({
      operationId: 'putBundle',
      method: 'PUT',
      path: '/admin/bundles/{id}',
      summary: 'Add or replace a bundle of the catalogue (kept until the catalogue file version is raised)',
      tag: 'admin',
      lane: 'admin',
      sec: true,
      roles: SYSTEM_ONLY,
      extension: true,
      params: idParams,
      body: bundleIn,
      responses: { 200: { description: 'OK', schema: bundleSchema } },
      errors: [400, 401, 403],
      handler: async ({ params, body, access }) => ok(await svc.put(params.id, body, access)),
    }),
  ];
}
