/** Spec 4.6: the bundle catalogue, plus the admin operation that adds or replaces a bundle. */
import Joi from 'joi';
import { READERS, SYSTEM_ONLY, type Role } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { idParams } from '../../http/schemas.js';
import type { Bundle } from './model.js';
import { bundleFields, bundleSchema } from './schema.js';
import type { BundleService } from './service.js';

const bundleIn = Joi.object({ ...bundleFields, id: bundleFields.id.optional() })
  .required()
  .label('Bundle').meta({ className: 'BundleInput' });

const ALL: readonly Role[] = [...READERS, 'agent'];

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'modules', sec: true, roles: ALL, errors: [401, 403] });

export function bundleRoutes(svc: BundleService): RouteSpec[] {
  return [
    route({
      operationId: 'listBundles',
      method: 'GET',
      path: '/bundle',
      summary: 'The bundle catalogue',
      lane: 'interactive',
      responses: { 200: { description: 'OK', schema: Joi.array().items(bundleSchema) } },
      handler: async () => ok(await svc.list()),
    }),
    route<{ id: string }>({
      operationId: 'getBundle',
      method: 'GET',
      path: '/bundle/{id}',
      summary: 'One bundle of the catalogue',
      lane: 'interactive',
      params: idParams,
      responses: { 200: { description: 'OK', schema: bundleSchema } },
      errors: [400, 401, 403, 404],
      handler: async ({ params }) => ok(await svc.get(params.id)),
    }),
    route<{ id: string }, Record<string, never>, Omit<Bundle, 'id'> & { id?: string }>({
      operationId: 'putBundle',
      method: 'PUT',
      path: '/admin/bundles/{id}',
      summary: 'Add or replace a bundle of the catalogue (kept until the catalogue file version is raised)',
      tag: 'admin',
      lane: 'admin',
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
