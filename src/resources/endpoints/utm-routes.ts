/** Spec 4.2: UTM endpoints (firewalls). Operations without "sec" admit perimeter callers without a token. */
import Joi from 'joi';
import type { Operation } from 'fast-json-patch';
import { READERS, WRITERS, type Role } from '../../access/principal.js';
import { routeDefaults, emptyOk, ok, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import { aggregationTermBucket, countWrapper } from '../../http/schemas.js';
import type { UtmCriteria } from './criteria.js';
import { CONNECTION_STATUSES, INTERFACE_STATUSES, WAN_STATUSES, type ConnectionStatus, type InterfaceStatus, type WanStatus } from './model.js';
import type { EndpointInput, EndpointService } from './service.js';
import { endpointBody, endpointIdParams, id, jsonPatchBody, pagedUtmCriteria, pageUtmEndpoint, UTM_CRITERIA, utmEndpointRecord } from './schema.js';

const TAG = 'utm-endpoint';
const SELF_READERS: readonly Role[] = [...READERS, 'agent'];
const value = Joi.string().trim().min(1).max(256);
const utmList = Joi.array().items(utmEndpointRecord);

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: false, roles: READERS, errors: [400, 401, 403, 404] });

export function utmEndpointRoutes(svc: EndpointService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'createUtmEndpoint',
      method: 'POST',
      path: '/utm-endpoint',
      summary: 'Register a UTM endpoint (id generated when absent; serial, MAC and common name unique)',
      lane: 'admin',
      roles: WRITERS,
      idempotent: true,
      body: endpointBody('utm').required(),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 409],
      handler: async ({ body, access, createdId }) => ok(await svc.create(body, 'utm', access, createdId)),
    }),
    route<{ id: string }, Record<string, never>, EndpointInput>({
      operationId: 'replaceUtmEndpoint',
      method: 'PUT',
      path: '/utm-endpoint/{id}',
      summary: 'Replace a UTM endpoint; a stale integer version answers 409',
      lane: 'admin',
      roles: WRITERS,
      params: endpointIdParams,
      body: endpointBody('utm').required(),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ params, body, access }) => ok(await svc.replace(params.id, body, 'utm', access)),
    }),
    route<{ id: string }, Record<string, never>, Operation[]>({
      operationId: 'patchUtmEndpoint',
      method: 'PATCH',
      path: '/utm-endpoint/{id}',
      summary: 'Apply an RFC 6902 JSON Patch; server-owned fields answer 405; the result is validated like a PUT',
      lane: 'admin',
      sec: true,
      roles: WRITERS,
      params: endpointIdParams,
      body: jsonPatchBody,
      bodyContentType: 'application/json-patch+json',
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404, 405, 409, 500, 503],
      handler: async ({ params, body, access }) => ok(await svc.jsonPatch(params.id, body, access)),
    }),
    route<{ id: string }>({
      operationId: 'getUtmEndpoint',
      method: 'GET',
      path: '/utm-endpoint/{id}',
      summary: 'Read a UTM endpoint (404 for an id of another family)',
      lane: 'interactive',
      roles: SELF_READERS,
      params: endpointIdParams,
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, access }) => ok(await svc.getFamilyRecord(params.id, 'utm', access)),
    }),
    route<{ id: string; connectionStatus: ConnectionStatus }>({
      operationId: 'setUtmConnectionStatus',
      method: 'PATCH',
      path: '/utm-endpoint/{id}/connectionStatus/{connectionStatus}',
      summary: 'Set the connection status of a UTM endpoint',
      lane: 'agent',
      roles: WRITERS,
      params: Joi.object({
        id: id.required(),
        connectionStatus: Joi.string()
          .valid(...CONNECTION_STATUSES)
          .required(),
      }),
      responses: { 200: { description: 'OK, no body' } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => {
        await svc.connections.setUtmConnectionStatus(params.id, params.connectionStatus, access);
        return emptyOk();
      },
    }),
    route<{ serial: string; name: WanStatus }, Record<string, never>, { status: InterfaceStatus }>({
      operationId: 'reportUtmInterface',
      method: 'POST',
      path: '/utm-endpoint/serial/{serial}/interface/{name}',
      summary: 'Report a WAN interface status; wanStatus follows the WAN that carries traffic',
      lane: 'agent',
      roles: WRITERS,
      params: Joi.object({
        serial: value.required(),
        name: Joi.string()
          .valid(...WAN_STATUSES)
          .required(),
      }),
      body: Joi.object({
        status: Joi.string()
          .valid(...INTERFACE_STATUSES)
          .required(),
      })
        .required()
        .label('UtmEndpointInterfaceUpdate').meta({ className: 'UtmEndpointInterfaceUpdate' }).example({"status": "ACTIVE"}),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, body, access }) => ok(await svc.connections.reportInterface(params.serial, params.name, body.status, access)),
    }),
    route<{ serial: string; siteId: string }>({
      operationId: 'getUtmEndpointBySerialAndSite',
      method: 'GET',
      path: '/utm-endpoint/serial/{serial}/site/{siteId}',
      summary: 'The UTM endpoint with this serial at this site',
      lane: 'interactive',
      params: Joi.object({ serial: value.required(), siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, access }) => ok(await svc.keys.utmBySerial(params.serial, access, params.siteId)),
    }),
    route<{ network: string }>({
      operationId: 'getUtmEndpointsByNetwork',
      method: 'GET',
      path: '/utm-endpoint/vendor-network/{network}',
      summary: 'UTM endpoints with this firewall network id',
      lane: 'interactive',
      params: Joi.object({ network: value.required() }),
      responses: { 200: { description: 'OK', schema: utmList } },
      errors: [400, 401, 403],
      handler: async ({ params, access }) => ok(await svc.queries.utmsInNetwork(params.network, access)),
    }),
    route<{ mac: string }>({
      operationId: 'getUtmEndpointByMac',
      method: 'GET',
      path: '/utm-endpoint/mac/{mac}',
      summary: 'The UTM endpoint whose latest MAC address is this one (separators and case ignored)',
      lane: 'interactive',
      params: Joi.object({ mac: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, access }) => ok(await svc.keys.utmByMac(params.mac, access)),
    }),
    route<{ serial: string }>({
      operationId: 'getUtmEndpointBySerial',
      method: 'GET',
      path: '/utm-endpoint/serial/{serial}',
      summary: 'The UTM endpoint with this serial',
      lane: 'interactive',
      params: Joi.object({ serial: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, access }) => ok(await svc.keys.utmBySerial(params.serial, access)),
    }),
    route<{ siteId: string }>({
      operationId: 'getUtmEndpointsBySite',
      method: 'GET',
      path: '/utm-endpoint/site/{siteId}',
      summary: 'UTM endpoints at this site (siteId)',
      lane: 'interactive',
      params: Joi.object({ siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: utmList } },
      errors: [400, 401, 403],
      handler: async ({ params, access }) => ok(await svc.queries.utmsAtSite(params.siteId, access)),
    }),
    route<{ commonName: string }>({
      operationId: 'getUtmEndpointByCommonName',
      method: 'GET',
      path: '/utm-endpoint/common-name/{commonName}',
      summary: 'The UTM endpoint with this certificate common name (case-insensitive)',
      lane: 'interactive',
      params: Joi.object({ commonName: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      handler: async ({ params, access }) => ok(await svc.keys.utmByCommonName(params.commonName, access)),
    }),
    route<Record<string, never>, Record<string, never>, { criteria: UtmCriteria; pageRequest: PageRequest }>({
      operationId: 'searchUtmEndpoints',
      method: 'POST',
      path: '/utm-endpoint/searchPage',
      summary: 'Page through UTM endpoints matching UtmCriteria',
      lane: 'interactive',
      sec: true,
      body: pagedUtmCriteria,
      responses: { 200: { description: 'OK', schema: pageUtmEndpoint } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok(await svc.queries.searchUtm(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => svc.queries.deepUtm(body.criteria, body.pageRequest, access),
    }),
    route<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'countUtmEndpoints',
      method: 'POST',
      path: '/utm-endpoint/count',
      summary: 'Count UTM endpoints matching UtmCriteria',
      lane: 'heavy',
      sec: true,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: countWrapper } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok({ count: await svc.queries.countUtm(body, access) }),
    }),
    route<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'aggregateUtmEndpointModels',
      method: 'POST',
      path: '/utm-endpoint/model/aggregation',
      summary: 'Count of UTM endpoints per model (every model), by count descending then model',
      lane: 'heavy',
      sec: true,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: Joi.array().items(aggregationTermBucket) } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok(await svc.queries.utmModelAggregation(body, access)),
    }),
  ];
}
