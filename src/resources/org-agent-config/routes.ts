/** Spec 4.9: organization agent configuration (POST /config/org) and its read-back. */
import Joi from 'joi';
import { READERS, WRITERS } from '../../access/principal.js';
import { routeDefaults, created, ok, type RouteSpec } from '../../http/routes.js';
import { isoDateOut, orgId, serverOwned, userKey } from '../../http/schemas.js';
import type { Config } from './model.js';
import type { OrgAgentConfigService } from './service.js';

const INT32_MAX = 2_147_483_647;
const count = Joi.number().integer().min(0).max(INT32_MAX);
const fileName = Joi.string()
  .trim()
  .min(1)
  .max(255)
  .pattern(/^[^\0\r\n]+$/, 'file name');
/** Further entries: scalar values under identifier-like names. */
const EXTRA_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

const winEventLogConfig = Joi.object({
  name: Joi.string().trim().min(1).max(256).required(),
  api: Joi.string().trim().min(1).max(64).required(),
}).label('WinEventLogConfig').meta({ className: 'WinEventLogConfig' });

const winEventIgnore = Joi.object({
  product: Joi.string().trim().min(1).max(256).required(),
  eventId: count.required(),
}).label('WinEventIgnore').meta({ className: 'WinEventIgnore' });

const knownFields = {
  dynamicModules: Joi.array()
    .items(Joi.string().pattern(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'module name'))
    .max(64)
    .unique(),
  enableFim: Joi.boolean(),
  enableWindowsEventLog: Joi.boolean(),
  commUrl: Joi.string().uri({ scheme: ['wss', 'https'] }).max(2048),
  commKeepAliveSeconds: count,
  commMinRetryDelaySeconds: count,
  commMaxRetryDelaySeconds: count,
  commMaxRetries: count,
  journalFileName: fileName,
  journalMaxSizeMB: count,
  journalMaxBackups: count,
  journalMaxAgeDays: count,
  loggingFileName: fileName,
  loggingMaxSizeMB: count,
  windowsEventLogs: Joi.array().items(winEventLogConfig).max(256),
  windowsEventIgnores: Joi.array().items(winEventIgnore).max(1024),
  presenceTimeoutSeconds: Joi.number()
    .integer()
    .min(1)
    .max(INT32_MAX)
    .description(
      "Extension: this organization's presence timeout in seconds (default ECS_PRESENCE_TIMEOUT): a CONNECTED endpoint not seen for it reads as POTENTIALLY_DISCONNECTED",
    ).meta({ 'x-extension': true }),
};

const KNOWN = new Set(Object.keys(knownFields));

/** Further entries (beyond the known ones) must be scalars under identifier-like names. */
function extraProblem(key: string, value: unknown): string | undefined {
  if (!EXTRA_KEY.test(key)) return `${key.replace(/[{}]/g, '?')}: a further entry's name starts with a letter and holds up to 64 letters, digits, _ . or -`;
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return undefined;
  if (typeof value === 'string' && value.length <= 4096) return undefined;
  return `${key}: further entries must be a string (up to 4096 characters), a number or a boolean`;
}

// Extra entries are checked in code, not with joi's pattern(): its OpenAPI form
// (patternProperties) would also constrain the known entries, which JSON Schema matches too.
const configFieldsIn = Joi.object(knownFields)
  .unknown(true)
  .max(256)
  .custom((v: Record<string, unknown>, helpers) => {
    for (const [key, value] of Object.entries(v)) {
      if (KNOWN.has(key)) continue;
      const problem = extraProblem(key, value);
      // joi reads braces in a message as a template: the problems hold none (odd key names are masked).
      if (problem) return helpers.message({ custom: problem });
    }
    const { commMinRetryDelaySeconds: min, commMaxRetryDelaySeconds: max } = v as {
      commMinRetryDelaySeconds?: number;
      commMaxRetryDelaySeconds?: number;
    };
    if (min !== undefined && max !== undefined && min > max) {
      return helpers.message({ custom: `commMinRetryDelaySeconds (${min}) must not exceed commMaxRetryDelaySeconds (${max})` });
    }
    return v;
  })
  .description('the known entries below, plus further scalar entries (string, number or boolean) under identifier-like names')
  .label('ConfigFields').meta({ className: 'ConfigFieldsInput' });

const configIn = Joi.object<Config>({
  orgId: orgId.required(),
  fields: configFieldsIn.required(),
  // A configuration as read may be sent back: its audit fields are the server's.
  ...serverOwned,
})
  .required()
  .label('Config').meta({ className: 'ConfigInput' });

const configOut = Joi.object({
  orgId: Joi.string().required(),
  fields: Joi.object(knownFields).unknown(true).required().label('ConfigFields').meta({ className: 'ConfigFields' }),
  createdAt: isoDateOut.required(),
  createdBy: userKey.required(),
  updatedAt: isoDateOut.required(),
  updatedBy: userKey.required(),
}).label('Config').meta({ className: 'Config' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'config', sec: true, roles: WRITERS, errors: [400, 401, 403, 500] });

export function orgAgentConfigRoutes(svc: OrgAgentConfigService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, Config>({
      operationId: 'putOrgAgentConfig',
      method: 'POST',
      path: '/config/org',
      summary: "Set an organization's agent configuration (replaces the previous one)",
      lane: 'admin',
      body: configIn,
      responses: { 201: { description: 'Created', schema: configOut } },
      handler: async ({ body, access }) => created(await svc.put(body, access)),
    }),
    route<{ orgId: string }>({
      operationId: 'getOrgAgentConfig',
      method: 'GET',
      path: '/config/org/{orgId}',
      summary: "Read an organization's agent configuration",
      lane: 'interactive',
      roles: READERS,
      extension: true,
      params: Joi.object({ orgId: orgId.required() }),
      responses: { 200: { description: 'OK', schema: configOut } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.get(params.orgId, access)),
    }),
  ];
}
