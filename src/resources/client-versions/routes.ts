/** Spec 4.1: default and per-organization pinned agent client versions. */
import Joi from 'joi';
import { READERS, SYSTEM_ONLY, WRITERS } from '../../access/principal.js';
import { NotFoundError } from '../../errors.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { isoDateOut, orgId, seqNoPrimaryTerm, userKey } from '../../http/schemas.js';
import type { ClientVersionService, DefaultClientVersions } from './service.js';

/**
 * A semantic version, `v` optional (semver.org's grammar, numbers up to 15 digits so they stay
 * exact): the pattern puts in the document what canonicalVersion checks.
 */
const SEMVER =
  /^v?(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})(?:-((?:0|[1-9]\d{0,14}|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d{0,14}|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const versionString = Joi.string()
  .trim()
  .max(64)
  .pattern(SEMVER, 'semantic version')
  .messages({ 'string.pattern.name': '"{{#value}}" is not a semantic version (e.g. 3.10.2 or v3.10.2)' });

const defaultClientVersions = Joi.object({
  linux: versionString.required(),
  mac: versionString.required(),
  windows: versionString.required(),
}).label('DefaultClientVersions').meta({ className: 'DefaultClientVersions' }).example({"linux": "v3.9.0", "mac": "v3.9.1", "windows": "v3.10.2"});

const orgTargetVersionIn = Joi.object({
  orgId: Joi.string().strip(),
  linux: versionString.allow('').required(),
  mac: versionString.allow('').required(),
  windows: versionString.allow('').required(),
})
  .required()
  .label('OrgTargetVersion').meta({ className: 'OrgTargetVersionInput' });

const orgTargetVersion = Joi.object({
  orgId: Joi.string().required(),
  linux: Joi.string().allow(''),
  mac: Joi.string().allow(''),
  windows: Joi.string().allow(''),
}).label('OrgTargetVersion').meta({ className: 'OrgTargetVersion' });

const endpointOrgConfig = Joi.object({
  orgId: Joi.string().required(),
  activated: Joi.boolean(),
  licenseKey: Joi.string(),
  targetVersion: Joi.string().description('deprecated single pin'),
  targetVersionLinux: Joi.string(),
  targetVersionMac: Joi.string(),
  targetVersionWindows: Joi.string(),
  createdBy: userKey,
  updatedBy: userKey,
  createdAt: isoDateOut,
  updatedAt: isoDateOut,
  version: seqNoPrimaryTerm,
}).label('EndpointOrgConfig').meta({ className: 'EndpointOrgConfig' });

const orgParams = Joi.object({ orgId: orgId.required() });
const ALL: readonly ('admin' | 'reader' | 'agent')[] = ['admin', 'reader', 'agent'];

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'client-version', sec: false, roles: SYSTEM_ONLY, errors: [401, 403] });

export function clientVersionRoutes(svc: ClientVersionService): RouteSpec[] {
  return [
    route({
      operationId: 'getDefaultClientVersions',
      method: 'GET',
      path: '/client-version/default',
      summary: 'Effective default agent versions per operating system',
      lane: 'agent',
      roles: ALL,
      responses: { 200: { description: 'OK', schema: defaultClientVersions } },
      handler: async () => ok(await svc.effectiveDefaults()),
    }),
    route<Record<string, never>, Record<string, never>, DefaultClientVersions>({
      operationId: 'putDefaultClientVersions',
      method: 'PUT',
      path: '/client-version/default',
      summary: 'Override the default agent versions',
      lane: 'admin',
      body: defaultClientVersions.required(),
      responses: { 200: { description: 'OK', schema: defaultClientVersions } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok(await svc.setDefaults(body, access)),
    }),
    route({
      operationId: 'deleteDefaultClientVersions',
      method: 'DELETE',
      path: '/client-version/default',
      summary: 'Remove the stored override; answers the effective versions after clearing',
      lane: 'admin',
      responses: { 200: { description: 'OK', schema: defaultClientVersions } },
      errors: [401, 403, 500],
      handler: async () => ok(await svc.clearDefaults()),
    }),
    route({
      operationId: 'listOrgTargetVersions',
      method: 'GET',
      path: '/org-config/target-versions',
      summary: 'Every organization configuration with a pinned version (internal admin screen)',
      lane: 'heavy',
      roles: READERS,
      responses: { 200: { description: 'OK', schema: Joi.array().items(orgTargetVersion) } },
      handler: async ({ access }) => ok(await svc.listTargetVersions(access)),
    }),
    route<{ orgId: string }, Record<string, never>, { linux: string; mac: string; windows: string }>({
      operationId: 'putOrgTargetVersion',
      method: 'PUT',
      path: '/org-config/{orgId}/target-version',
      summary: "Pin an organization's agent versions per operating system ('' clears one)",
      lane: 'admin',
      roles: WRITERS,
      params: orgParams,
      body: orgTargetVersionIn,
      responses: { 200: { description: 'OK', schema: orgTargetVersion } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, body, access }) => ok(await svc.setTargetVersion(params.orgId, body, access)),
    }),
    route<{ orgId: string }>({
      operationId: 'deleteOrgTargetVersion',
      method: 'DELETE',
      path: '/org-config/{orgId}/target-version',
      summary: 'Clear the legacy pin and every per-OS pin',
      lane: 'admin',
      roles: WRITERS,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: orgTargetVersion } },
      errors: [401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.clearTargetVersion(params.orgId, access)),
    }),
    route<{ orgId: string }>({
      operationId: 'getEndpointOrgConfig',
      method: 'GET',
      path: '/org-config/{orgId}',
      summary: "Read an organization's endpoint configuration with its SeqNoPrimaryTerm version",
      lane: 'interactive',
      sec: true,
      roles: READERS,
      extension: true,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: endpointOrgConfig } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => {
        const cfg = await svc.getOrgConfig(params.orgId, access);
        if (!cfg) throw new NotFoundError(`organization ${params.orgId} has no configuration`);
        return ok(cfg);
      },
    }),
  ];
}
