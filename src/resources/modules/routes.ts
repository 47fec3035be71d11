/** Spec 4.6: enabled modules per endpoint and per organization, the UI summary, bundle subscriptions. */
import Joi from 'joi';
import { READERS, WRITERS, type Role } from '../../access/principal.js';
import { routeDefaults, noContent, ok, type RouteSpec } from '../../http/routes.js';
import { id, isoDateOut, orgId, serverOwnedFields } from '../../http/schemas.js';
import { bundleSchema } from '../bundles/schema.js';
import { MODULE_NAMES, moduleNameSchema } from '../module-names.js';
import { DYNAMIC_MODULE_STATUSES, type ModuleScope } from './model.js';
import type { EnabledModulesInput, ModuleService } from './service.js';

const status = Joi.string().valid(...DYNAMIC_MODULE_STATUSES);
const moduleFields = Object.fromEntries(MODULE_NAMES.map((m) => [m, status]));

const enabledModulesIn = Joi.object({
  id: id.description('the endpoint id or the organization id; must match the path when given'),
  orgId: orgId.description("the record's organization; must match when given"),
  ...moduleFields,
  version: Joi.number().integer().min(0).description('the version read; a stale one answers 409'),
  ...serverOwnedFields(Joi.string().allow('')),
})
  .required()
  .label('EnabledModules').meta({ className: 'EnabledModulesInput' });

const enabledModules = Joi.object({
  id: Joi.string().required(),
  orgId: Joi.string().required(),
  ...moduleFields,
  version: Joi.number().integer().min(1).required(),
  createdBy: Joi.string().allow('').required(),
  updatedBy: Joi.string().allow('').required(),
  createdAt: isoDateOut.required(),
  updatedAt: isoDateOut.required(),
}).label('EnabledModules').meta({ className: 'EnabledModules' }).example({"id": "ep-7f3a9c", "orgId": "msp-1", "fim": "ACTIVE", "antivirus": "PENDING", "version": 2, "createdBy": "soc-admin", "updatedBy": "soc-admin", "createdAt": "2026-11-20T09:12:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z"});

const orgEnabledModules = Joi.object({
  avEnabled: Joi.boolean().required(),
  fimEnabled: Joi.boolean().required(),
  panEnabled: Joi.boolean().required(),
  windowsEventLogEnabled: Joi.boolean().required(),
}).label('OrgEnabledModules').meta({ className: 'OrgEnabledModules' }).example({"avEnabled": true, "fimEnabled": true, "panEnabled": false, "windowsEventLogEnabled": false});

/** Body of a subscription: a Bundle; only its id is used (it must match the path when given). */
const bundleIn = Joi.object({
  id,
  name: Joi.string().allow(''),
  description: Joi.string().allow(''),
  // Bounded like every request array (API4); room for repeats of the module names.
  modules: Joi.array().items(moduleNameSchema).max(100),
})
  .required()
  .label('Bundle').meta({ className: 'BundleSubscription' });

const endpointParams = Joi.object({ id: id.required() });
const orgParams = Joi.object({ orgId: orgId.required() });
const subscriptionParams = Joi.object({ orgId: orgId.required(), bundleId: id.required() });

const WITH_AGENT: readonly Role[] = [...READERS, 'agent'];
const OK_MODULES = { 200: { description: 'OK', schema: enabledModules } };

type ScopeParams = { id: string } | { orgId: string };

/** GET/POST/PUT for one scope: the endpoint's record or the organization's. */
function scopeRoutes(svc: ModuleService, scope: ModuleScope): RouteSpec[] {
  const base = scope === 'endpoint' ? '/endpoint/{id}/enabled-modules' : '/org/{orgId}/enabled-modules';
  const params = scope === 'endpoint' ? endpointParams : orgParams;
  const key = (p: ScopeParams): string => ('id' in p ? p.id : p.orgId);
  const noun = scope === 'endpoint' ? 'Endpoint' : 'Org';
  const whose = scope === 'endpoint' ? "an endpoint's" : "an organization's";
  return [
    route<ScopeParams>({
      operationId: `get${noun}EnabledModules`,
      method: 'GET',
      path: base,
      summary: `Read ${whose} enabled modules (404 when never written)`,
      lane: 'agent',
      roles: WITH_AGENT,
      params,
      responses: OK_MODULES,
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params: p, access }) => ok(await svc.get(scope, key(p), access)),
    }),
    route<ScopeParams, Record<string, never>, EnabledModulesInput>({
      operationId: `create${noun}EnabledModules`,
      method: 'POST',
      path: base,
      summary: `Create ${whose} enabled modules (409 when they exist)`,
      lane: 'admin',
      params,
      body: enabledModulesIn,
      responses: OK_MODULES,
      handler: async ({ params: p, body, access }) => ok(await svc.create(scope, key(p), body, access)),
    }),
    route<ScopeParams, Record<string, never>, EnabledModulesInput>({
      operationId: `replace${noun}EnabledModules`,
      method: 'PUT',
      path: base,
      summary: `Replace ${whose} enabled modules (a stale version answers 409)`,
      lane: 'admin',
      params,
      body: enabledModulesIn,
      responses: OK_MODULES,
      handler: async ({ params: p, body, access }) => ok(await svc.replace(scope, key(p), body, access)),
    }),
  ];
}

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'modules', sec: true, roles: WRITERS, errors: [400, 401, 403, 404, 409, 500] });

export function moduleRoutes(svc: ModuleService): RouteSpec[] {
  return [
    ...scopeRoutes(svc, 'endpoint'),
    ...scopeRoutes(svc, 'org'),
    route<{ orgId: string }>({
      operationId: 'orgEnabledModulesInstallComplete',
      method: 'POST',
      path: '/org/{orgId}/enabled-modules/installcomplete',
      summary: "Confirm installation: the organization's PENDING modules become ACTIVE",
      lane: 'agent',
      roles: [...WRITERS, 'agent'],
      params: orgParams,
      responses: { 204: { description: 'No Content' } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => {
        await svc.installComplete(params.orgId, access);
        return noContent();
      },
    }),
    route({
      operationId: 'getUiOrgModules',
      method: 'GET',
      path: '/ui/org/modules',
      summary: "OrgEnabledModules of the caller's own organization (the token's)",
      lane: 'agent',
      roles: WITH_AGENT,
      responses: { 200: { description: 'OK', schema: orgEnabledModules } },
      errors: [401, 403],
      handler: async ({ access }) => ok(await svc.orgSummaryFor(access)),
    }),
    route<{ orgId: string; bundleId: string }, Record<string, never>, { id?: string }>({
      operationId: 'subscribeOrgBundle',
      method: 'POST',
      path: '/org/{orgId}/bundle/{bundleId}',
      summary: "Subscribe an organization to a bundle: its modules are added as PENDING (ACTIVE ones stay)",
      lane: 'admin',
      params: subscriptionParams,
      body: bundleIn,
      responses: OK_MODULES,
      handler: async ({ params, body, access }) => ok(await svc.subscribe(params.orgId, params.bundleId, body, access)),
    }),
    route<{ orgId: string; bundleId: string }>({
      operationId: 'unsubscribeOrgBundle',
      method: 'DELETE',
      path: '/org/{orgId}/bundle/{bundleId}',
      summary: "End a bundle subscription: its modules become INACTIVE unless another subscribed bundle includes them",
      lane: 'admin',
      params: subscriptionParams,
      responses: OK_MODULES,
      handler: async ({ params, access }) => ok(await svc.unsubscribe(params.orgId, params.bundleId, access)),
    }),
    route<{ orgId: string }>({
      operationId: 'listOrgBundles',
      method: 'GET',
      path: '/org/{orgId}/bundle',
      summary: 'The bundles an organization subscribes to',
      lane: 'interactive',
      roles: READERS,
      extension: true,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(bundleSchema) } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.subscriptions(params.orgId, access)),
    }),
  ];
}
