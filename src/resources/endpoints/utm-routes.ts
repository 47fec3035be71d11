/** Spec 4.2: UTM endpoints (firewalls). Operations without "sec" admit perimeter callers without a token. */
import Joi from 'joi';
import type { Operation } from 'fast-json-patch';
import { READERS, WRITERS, type Role } from '../../http/auth.js';
import { defineRoute, emptyOk, ok, STD_ERRORS, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../http/paging.js';
import { aggregationTermBucket, countWrapper } from '../../http/schemas.js';
import type { UtmCriteria } from './criteria.js';
import { CONNECTION_STATUSES, INTERFACE_STATUSES, WAN_STATUSES, type ConnectionStatus, type InterfaceStatus, type WanStatus } from './model.js';
import type { EndpointInput, EndpointService } from './service.js';
import { deepUtm } from './deep-search.js';
import { endpointBody, endpointIdParams, id, jsonPatchBody, pagedUtmCriteria, pageUtmEndpoint, UTM_CRITERIA, utmEndpointRecord } from './schema.js';

const TAG = 'utm-endpoint';
const SELF_READERS: readonly Role[] = [...READERS, 'agent'];
const value = Joi.string().trim().min(1).max(256);
const utmList = Joi.array().items(utmEndpointRecord);

export function utmEndpointRoutes(svc: EndpointService): RouteSpec[] {
  return [
    defineRoute<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'createUtmEndpoint',
      method: 'POST',
      path: '/utm-endpoint',
      summary: 'Register a UTM endpoint (id generated when absent; serial, MAC and common name unique)',
      tag: TAG,
      lane: 'admin',
      sec: false,
      roles: WRITERS,
      idempotent: true,
      body: endpointBody('utm').required(),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 409],
      handler: async ({ body, access, createdId }) => ok(await svc.create(body, 'utm', access, createdId)),
    }),
    defineRoute<{ id: string }, Record<string, never>, EndpointInput>({
      operationId: 'replaceUtmEndpoint',
      method: 'PUT',
      path: '/utm-endpoint/{id}',
      summary: 'Replace a UTM endpoint; a stale integer version answers 409',
      tag: TAG,
      lane: 'admin',
      sec: false,
      roles: WRITERS,
      params: endpointIdParams,
      body: endpointBody('utm').required(),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [...STD_ERRORS, 404, 409],
      handler: async ({ params, body, access }) => ok(await svc.replace(params.id, body, 'utm', access)),
    }),
    defineRoute<{ id: string }, Record<string, never>, Operation[]>({
      operationId: 'patchUtmEndpoint',
      method: 'PATCH',
      path: '/utm-endpoint/{id}',
      summary: 'Apply an RFC 6902 JSON Patch; server-owned fields answer 405; the result is validated like a PUT',
      tag: TAG,
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
    defineRoute<{ id: string }>({
      operationId: 'getUtmEndpoint',
      method: 'GET',
      path: '/utm-endpoint/{id}',
      summary: 'Read a UTM endpoint (404 for an id of another family)',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: SELF_READERS,
      params: endpointIdParams,
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.getFamilyRecord(params.id, 'utm', access)),
    }),
    defineRoute<{ id: string; connectionStatus: ConnectionStatus }>({
      operationId: 'setUtmConnectionStatus',
      method: 'PATCH',
      path: '/utm-endpoint/{id}/connectionStatus/{connectionStatus}',
      summary: 'Set the connection status of a UTM endpoint',
      tag: TAG,
      lane: 'agent',
      sec: false,
      roles: WRITERS,
      params: Joi.object({
        id: id.required(),
        connectionStatus: Joi.string()
          .valid(...CONNECTION_STATUSES)
          .required(),
      }),
      responses: { 200: { description: 'OK, no body' } },
      errors: [...STD_ERRORS, 404],
      handler: async ({ params, access }) => {
        await svc.setUtmConnectionStatus(params.id, params.connectionStatus, access);
        return emptyOk();
      },
    }),
    defineRoute<{ serial: string; name: WanStatus }, Record<string, never>, { status: InterfaceStatus }>({
      operationId: 'reportUtmInterface',
      method: 'POST',
      path: '/utm-endpoint/serial/{serial}/interface/{name}',
      summary: 'Report a WAN interface status; wanStatus follows the WAN that carries traffic',
      tag: TAG,
      lane: 'agent',
      sec: false,
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
        .label('UtmEndpointInterfaceUpdate'),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, body, access }) => ok(await svc.reportInterface(params.serial, params.name, body.status, access)),
    }),
    defineRoute<{ serial: string; siteId: string }>({
      operationId: 'getUtmEndpointBySerialAndSite',
      method: 'GET',
      path: '/utm-endpoint/serial/{serial}/site/{siteId}',
      summary: 'The UTM endpoint with this serial at this site',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ serial: value.required(), siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.utmBySerial(params.serial, access, params.siteId)),
    }),
    defineRoute<{ network: string }>({
      operationId: 'getUtmEndpointsByNetwork',
      method: 'GET',
      path: '/utm-endpoint/vendor-network/{network}',
      summary: 'UTM endpoints with this firewall network id',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ network: value.required() }),
      responses: { 200: { description: 'OK', schema: utmList } },
      errors: [400, 401, 403],
      handler: async ({ params, access }) => ok(await svc.utmsInNetwork(params.network, access)),
    }),
    defineRoute<{ mac: string }>({
      operationId: 'getUtmEndpointByMac',
      method: 'GET',
      path: '/utm-endpoint/mac/{mac}',
      summary: 'The UTM endpoint whose latest MAC address is this one (separators and case ignored)',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ mac: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.utmByMac(params.mac, access)),
    }),
    defineRoute<{ serial: string }>({
      operationId: 'getUtmEndpointBySerial',
      method: 'GET',
      path: '/utm-endpoint/serial/{serial}',
      summary: 'The UTM endpoint with this serial',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ serial: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.utmBySerial(params.serial, access)),
    }),
    defineRoute<{ siteId: string }>({
      operationId: 'getUtmEndpointsBySite',
      method: 'GET',
      path: '/utm-endpoint/site/{siteId}',
      summary: 'UTM endpoints at this site (siteId)',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: utmList } },
      errors: [400, 401, 403],
      handler: async ({ params, access }) => ok(await svc.utmsAtSite(params.siteId, access)),
    }),
    defineRoute<{ commonName: string }>({
      operationId: 'getUtmEndpointByCommonName',
      method: 'GET',
      path: '/utm-endpoint/common-name/{commonName}',
      summary: 'The UTM endpoint with this certificate common name (case-insensitive)',
      tag: TAG,
      lane: 'interactive',
      sec: false,
      roles: READERS,
      params: Joi.object({ commonName: value.required() }),
      responses: { 200: { description: 'OK', schema: utmEndpointRecord } },
      errors: [400, 401, 403, 404],
      handler: async ({ params, access }) => ok(await svc.utmByCommonName(params.commonName, access)),
    }),
    defineRoute<Record<string, never>, Record<string, never>, { criteria: UtmCriteria; pageRequest: PageRequest }>({
      operationId: 'searchUtmEndpoints',
      method: 'POST',
      path: '/utm-endpoint/searchPage',
      summary: 'Page through UTM endpoints matching UtmCriteria',
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: READERS,
      body: pagedUtmCriteria,
      responses: { 200: { description: 'OK', schema: pageUtmEndpoint } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok(await svc.searchUtm(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => deepUtm(svc, body.criteria, body.pageRequest, access),
    }),
    defineRoute<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'countUtmEndpoints',
      method: 'POST',
      path: '/utm-endpoint/count',
      summary: 'Count UTM endpoints matching UtmCriteria',
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: countWrapper } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok({ count: await svc.countUtm(body, access) }),
    }),
    defineRoute<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'aggregateUtmEndpointModels',
      method: 'POST',
      path: '/utm-endpoint/model/aggregation',
      summary: 'Count of UTM endpoints per model (every model), by count descending then model',
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: Joi.array().items(aggregationTermBucket) } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok(await svc.utmModelAggregation(body, access)),
    }),
  ];
}
