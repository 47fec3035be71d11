/** Spec 4.3: LTE endpoints (cellular routers), all sec. */
import Joi from 'joi';
import { READERS, WRITERS } from '../../access/principal.js';
import { BadRequestError } from '../../errors.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import type { LteEndpointCriteria } from './criteria.js';
import type { EndpointInput, EndpointService } from './service.js';
import { endpointBody, lteEndpointRecord, pagedLteCriteria, pageLteEndpoint } from './schema.js';

const TAG = 'lte-endpoint';
const value = Joi.string().trim().min(1).max(256);

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: true, roles: READERS, errors: [400, 401, 403, 500] });

export function lteEndpointRoutes(svc: EndpointService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'createLteEndpoint',
      method: 'POST',
      path: '/lte-endpoint',
      summary: 'Save a new LTE endpoint (id generated when absent; 409 when it exists or IMEI + site is taken)',
      lane: 'admin',
      roles: WRITERS,
      idempotent: true,
      body: endpointBody('lte').required(),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [400, 401, 403, 409, 500],
      handler: async ({ body, access, createdId }) => ok(await svc.create(body, 'lte', access, createdId)),
    }),
    route<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'updateLteEndpoint',
      method: 'POST',
      path: '/lte-endpoint/update',
      summary: 'Replace the LTE endpoint named by body.id; a stale integer version answers 409',
      lane: 'admin',
      roles: WRITERS,
      body: endpointBody('lte').required(),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ body, access }) => {
        if (!body.id) throw new BadRequestError('body.id: required to name the LTE endpoint to update');
        return ok(await svc.replace(body.id, body, 'lte', access));
      },
    }),
    route<{ siteId: string }>({
      operationId: 'getLteEndpointsBySite',
      method: 'GET',
      path: '/lte-endpoint/site/{siteId}',
      summary: 'LTE endpoints at this site (site.id)',
      lane: 'interactive',
      params: Joi.object({ siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: Joi.array().items(lteEndpointRecord) } },
      handler: async ({ params, access }) => ok(await svc.queries.ltesAtSite(params.siteId, access)),
    }),
    route({
      operationId: 'sumLteDataUsage',
      method: 'GET',
      path: '/lte-endpoint/data-usage-sum',
      summary: 'Sum of dataUsage over the LTE endpoints visible to the caller, as text',
      lane: 'heavy',
      responses: { 200: { description: 'OK', contentType: 'text/plain', schema: Joi.string() } },
      handler: async ({ access }) => ({ status: 200, body: String(await svc.queries.lteDataUsageSum(access)), contentType: 'text/plain' }),
    }),
    route<{ imei: string; siteId: string }>({
      operationId: 'getLteEndpointByImeiAndSite',
      method: 'GET',
      path: '/lte-endpoint/imei/{imei}/site/{siteId}',
      summary: 'The LTE endpoint with this IMEI at this site (unique)',
      lane: 'interactive',
      params: Joi.object({ imei: value.required(), siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.keys.lteByImeiAndSite(params.imei, params.siteId, access)),
    }),
    route<Record<string, never>, Record<string, never>, { criteria: LteEndpointCriteria; pageRequest: PageRequest }>({
      operationId: 'searchLteEndpoints',
      method: 'POST',
      path: '/lte-endpoint/search',
      summary: 'Page through LTE endpoints matching LteEndpointCriteria',
      lane: 'interactive',
      body: pagedLteCriteria,
      responses: { 200: { description: 'OK', schema: pageLteEndpoint } },
      handler: async ({ body, access }) => ok(await svc.queries.searchLte(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => svc.queries.deepLte(body.criteria, body.pageRequest, access),
    }),
  ];
}
