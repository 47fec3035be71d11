/** Spec 4.8 (commands and support) and 4.5's ioc and uninstall-protect: one command pipeline. */
import Joi from 'joi';
import { WRITERS, type Role } from '../../access/principal.js';
import { routeDefaults, created, emptyOk, ok, type RouteSpec } from '../../http/routes.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageSchema } from '../../http/paging.js';
import type { PageRequest } from '../../domain.js';
import { id, isoDateOut, seqNoPrimaryTerm, userKey } from '../../http/schemas.js';
import type { SeqNoPrimaryTerm } from '../../store/versions.js';
import { COMMAND_NAME_PATTERN } from './catalogue.js';
import {
  COMMAND_MESSAGE_STATUSES,
  DELIVERY_STATUSES,
  EFFECTIVE_COMMAND_MESSAGE_STATUSES,
  type CommandMessageStatus,
  type EffectiveCommandMessageStatus,
  type NewMessage,
} from './model.js';
import {
  SUPPORT_INFORMATION_MODES,
  type CommandRequest,
  type CommandService,
  type SupportInformationRequest,
} from './service.js';

const TAG = 'command-message';
/** Operators read; the endpoint's own agent reads its messages and reports their status. */
const READERS_AND_AGENT: readonly Role[] = ['admin', 'reader', 'agent'];
const WRITERS_AND_AGENT: readonly Role[] = ['admin', 'agent'];

const moduleName = Joi.string().pattern(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'module name');
const messageName = Joi.string().pattern(/^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/, 'message name');
/** Nesting bound of a payload: far beyond any real message, well within the store's parser limits. */
const MAX_PAYLOAD_DEPTH = 32;

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_PAYLOAD_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth + 1;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, depth + 1));
  return max;
}

const payload = Joi.object()
  .unknown(true)
  .custom((v: Record<string, unknown>, helpers) => (depthOf(v) > MAX_PAYLOAD_DEPTH ? helpers.error('payload.depth') : v))
  .messages({ 'payload.depth': `{{#label}} nests deeper than ${MAX_PAYLOAD_DEPTH} levels` })
  .description('free-form message payload');

/** Extension: a message's own lifetime on create. */
const ttlSeconds = Joi.number()
  .integer()
  .min(1)
  .max(365 * 86_400)
  .description('Extension: seconds until the message expires; default ECS_COMMAND_TTL').meta({ 'x-extension': true });

/** The status as it reads: the spec's enum plus the extension status EXPIRED. */
const effectiveStatus = Joi.string()
  .valid(...EFFECTIVE_COMMAND_MESSAGE_STATUSES)
  .description(
    'EndpointCommandMessageStatus; EXPIRED is an extension status: a CREATED or RETRY message past its expiresAt reads EXPIRED and can no longer move',
  );

export const endpointCommandMessage = Joi.object({
  id: Joi.string().required(),
  status: effectiveStatus.required(),
  endpointId: Joi.string().required(),
  orgId: Joi.string().required(),
  createdBy: userKey.required(),
  updatedBy: userKey.required(),
  createdAt: isoDateOut.required(),
  updatedAt: isoDateOut.required(),
  version: seqNoPrimaryTerm.required(),
  module: Joi.string().required(),
  name: Joi.string().required(),
  uuid: Joi.string().required(),
  ruuid: Joi.string(),
  ts: isoDateOut.required(),
  payload: payload.required(),
  expiresAt: isoDateOut.description('Extension: when the message expires unless it was sent or failed before').meta({ 'x-extension': true }),
  retries: Joi.number().integer().min(0).description('Extension: moves into RETRY so far (at most ECS_COMMAND_MAX_RETRIES)').meta({ 'x-extension': true }),
  failureReason: Joi.string().description('Extension: why the message failed').meta({ 'x-extension': true }),
}).label('EndpointCommandMessage').meta({ className: 'EndpointCommandMessage' }).example({"id": "cm-91b2", "status": "SENT", "endpointId": "ep-7f3a9c", "orgId": "msp-1", "createdBy": {"username": "soc-admin", "authenticator": "token"}, "updatedBy": {"username": "soc-admin", "authenticator": "token"}, "createdAt": "2026-11-26T08:00:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z", "version": {"sequenceNumber": 41, "primaryTerm": 1}, "module": "fim", "name": "rescan", "uuid": "6f1c2a7e-3f7d-4d0e-9a57-0b5b8f6f3c11", "ts": "2026-11-26T08:00:00.000Z", "payload": {"paths": ["C:/Windows/System32"]}, "expiresAt": "2026-11-27T08:00:00.000Z", "retries": 0});

const delivery = Joi.object({
  uuid: Joi.string().required(),
  endpointId: Joi.string().required(),
  orgId: Joi.string().required(),
  status: Joi.string()
    .valid(...DELIVERY_STATUSES)
    .required(),
  version: Joi.number().integer().min(1).required(),
  createdBy: Joi.string().required(),
  updatedBy: Joi.string().required(),
  createdAt: isoDateOut.required(),
  updatedAt: isoDateOut.required(),
}).label('EndpointCommandMessageDelivery').meta({ className: 'EndpointCommandMessageDelivery' }).example({"uuid": "6f1c2a7e-3f7d-4d0e-9a57-0b5b8f6f3c11", "endpointId": "ep-7f3a9c", "orgId": "msp-1", "status": "DELIVERED", "version": 2, "createdBy": "soc-admin", "updatedBy": "ep-7f3a9c", "createdAt": "2026-11-26T08:00:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z"});

const newMessage = Joi.object<NewMessage>({
  module: moduleName.required(),
  name: messageName.required(),
  payload,
  ttlSeconds,
})
  .required()
  .label('EndpointCommandMessageRequest').meta({ className: 'NewEndpointCommandMessage' });

const statusPatch = Joi.object({
  version: seqNoPrimaryTerm.description('when given, the move applies only to this version of the message (409 otherwise)'),
  failureReason: Joi.string()
    .max(1024)
    .description('Extension: why the message failed, kept with a failure status').meta({ 'x-extension': true }),
}).label('EndpointCommandMessageStatusPatch').meta({ className: 'EndpointCommandMessageStatusChange' }).example({"version": {"sequenceNumber": 41, "primaryTerm": 1}});

const commandRequest = Joi.object<CommandRequest>({
  command: Joi.string().pattern(COMMAND_NAME_PATTERN, 'command name').required(),
  args: Joi.array().items(Joi.string().max(1024)).max(32),
  ttlSeconds,
})
  .required()
  .label('CommandRequest').meta({ className: 'CommandRequest' });

const supportInformationRequest = Joi.object<SupportInformationRequest>({
  endpointId: id.required(),
  mode: Joi.string()
    .valid(...SUPPORT_INFORMATION_MODES)
    .required(),
})
  .required()
  .label('SupportInformationRequest').meta({ className: 'SupportInformationRequest' });

const iocUpdateData = Joi.object<{ rulesUrl: string }>({
  rulesUrl: Joi.string().uri({ scheme: ['https'] }).max(2048).required(),
})
  .required()
  .label('IocUpdateData').meta({ className: 'IocUpdateData' });

const endpointIdParams = Joi.object({ endpointId: id.required() });
const idParams = Joi.object({ id: id.required() });

interface ListQuery {
  status?: EffectiveCommandMessageStatus;
  page: number;
  size: number;
}

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: true, roles: WRITERS, errors: [400, 401, 403, 404, 409, 500] });

export function commandRoutes(svc: CommandService): RouteSpec[] {
  return [
    route<{ endpointId: string }, Record<string, never>, NewMessage>({
      operationId: 'createEndpointCommandMessage',
      method: 'POST',
      path: '/command-message/endpoint/{endpoint-id}',
      summary: 'Queue a command message (status CREATED) for the endpoint socket gateway to deliver',
      lane: 'admin',
      params: endpointIdParams,
      idempotent: true,
      body: newMessage,
      responses: { 201: { description: 'Created', schema: endpointCommandMessage } },
      handler: async ({ params, body, access, createdId }) =>
        created(await svc.createMessage(params.endpointId, body, access, createdId)),
    }),
    route<{ endpointId: string }, ListQuery>({
      operationId: 'listEndpointCommandMessages',
      method: 'GET',
      path: '/command-message/endpoint/{endpoint-id}',
      summary: "An endpoint's command messages, oldest first, optionally of one status",
      lane: 'agent',
      roles: READERS_AND_AGENT,
      extension: true,
      params: endpointIdParams,
      query: Joi.object({
        status: effectiveStatus,
        page: Joi.number().integer().min(0).default(0),
        size: Joi.number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
      }),
      responses: { 200: { description: 'OK', schema: pageSchema(endpointCommandMessage, 'EndpointCommandMessagePage') } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, query, access }) => {
        const pr: PageRequest = { page: query.page, size: query.size };
        return ok(await svc.listMessages(params.endpointId, query.status, pr, access));
      },
    }),
    route<{ id: string }>({
      operationId: 'getEndpointCommandMessage',
      method: 'GET',
      path: '/command-message/{id}',
      summary: 'One command message with its SeqNoPrimaryTerm version',
      lane: 'agent',
      roles: READERS_AND_AGENT,
      extension: true,
      params: idParams,
      responses: { 200: { description: 'OK', schema: endpointCommandMessage } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.getMessage(params.id, access)),
    }),
    route<{ id: string; status: CommandMessageStatus }, Record<string, never>, { version?: SeqNoPrimaryTerm; failureReason?: string } | undefined>({
      operationId: 'patchEndpointCommandMessageStatus',
      method: 'PATCH',
      path: '/command-message/{id}/status/{status}',
      summary: 'Move a command message through its status machine (SENT records a delivery)',
      lane: 'agent',
      roles: WRITERS_AND_AGENT,
      params: Joi.object({
        id: id.required(),
        status: Joi.string()
          .valid(...COMMAND_MESSAGE_STATUSES)
          .required(),
      }),
      // A repeat with the same Idempotency-Key gets the first outcome; the key names the move (moveId).
      idempotent: true,
      body: statusPatch,
      responses: { 200: { description: 'OK', schema: endpointCommandMessage } },
      handler: async ({ params, body, access, createdId }) =>
        ok(await svc.moveStatus(params.id, params.status, body?.version, access, body?.failureReason, createdId)),
    }),
    route<{ uuid: string }>({
      operationId: 'getEndpointCommandMessageDelivery',
      method: 'GET',
      path: '/command-message/delivery/{uuid}',
      summary: 'The delivery record of a command message, by the message uuid',
      lane: 'agent',
      roles: READERS_AND_AGENT,
      extension: true,
      params: Joi.object({ uuid: id.required() }),
      responses: { 200: { description: 'OK', schema: delivery } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.getDelivery(params.uuid, access)),
    }),
    route<{ endpointId: string }>({
      operationId: 'listEndpointCommands',
      method: 'GET',
      path: '/command/endpoint/{endpointId}',
      summary: "Command names the endpoint accepts: its OS's catalogue entries when its cmd module is ACTIVE",
      tag: 'command',
      lane: 'interactive',
      roles: ['admin', 'reader'],
      params: endpointIdParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(Joi.string()) } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.listCommands(params.endpointId, access)),
    }),
    route<{ endpointId: string }, Record<string, never>, CommandRequest>({
      operationId: 'runEndpointCommand',
      method: 'POST',
      path: '/command/endpoint/{endpointId}',
      summary: 'Ask a CONNECTED endpoint to run one of the commands it accepts',
      tag: 'command',
      lane: 'admin',
      params: endpointIdParams,
      idempotent: true,
      body: commandRequest,
      responses: { 200: { description: 'OK (the command message is queued)' } },
      handler: async ({ params, body, access, createdId }) => {
        await svc.runCommand(params.endpointId, body, access, createdId);
        return emptyOk();
      },
    }),
    route<Record<string, never>, Record<string, never>, SupportInformationRequest>({
      operationId: 'requestSupportInformation',
      method: 'POST',
      path: '/csi',
      summary: 'Ask a CONNECTED endpoint to run the support-information utility in a mode',
      tag: 'csi',
      lane: 'admin',
      idempotent: true,
      body: supportInformationRequest,
      responses: { 200: { description: 'OK (the command message is queued)' } },
      handler: async ({ body, access, createdId }) => {
        await svc.requestSupportInformation(body, access, createdId);
        return emptyOk();
      },
    }),
    route<{ id: string }, Record<string, never>, { rulesUrl: string }>({
      operationId: 'updateEndpointIocRules',
      method: 'POST',
      path: '/endpoint/{id}/dynamic-module/ioc',
      summary: 'Ask a CONNECTED endpoint to load IOC rules from an https URL',
      tag: 'endpoint',
      lane: 'admin',
      params: idParams,
      idempotent: true,
      body: iocUpdateData,
      responses: { 200: { description: 'OK (the command message is queued)' } },
      handler: async ({ params, body, access, createdId }) => {
        await svc.updateIocRules(params.id, body.rulesUrl, access, createdId);
        return emptyOk();
      },
    }),
    route<{ endpointId: string }>({
      operationId: 'uninstallProtect',
      method: 'POST',
      path: '/endpoint/{endpointId}/uninstall-protect',
      summary: 'Ask a CONNECTED endpoint to uninstall the antivirus agent product',
      tag: 'endpoint',
      lane: 'admin',
      idempotent: true,
      params: endpointIdParams,
      responses: { 200: { description: 'OK (the command message is queued)' } },
      handler: async ({ params, access, createdId }) => {
        await svc.uninstallProtect(params.endpointId, access, createdId);
        return emptyOk();
      },
    }),
  ];
}
