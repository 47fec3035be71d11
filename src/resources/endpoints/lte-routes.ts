/** Spec 4.3: LTE endpoints (cellular routers), all sec. */
import Joi from 'joi';
import { READERS, WRITERS } from '../../http/auth.js';
import { BadRequestError } from '../../errors.js';
import { defineRoute, ok, STD_ERRORS, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import type { LteEndpointCriteria } from './criteria.js';
import type { EndpointInput, EndpointService } from './service.js';
import { endpointBody, lteEndpointRecord, pagedLteCriteria, pageLteEndpoint } from './schema.js';

const TAG = 'lte-endpoint';
const value = Joi.string().trim().min(1).max(256);

export function lteEndpointRoutes(svc: EndpointService): RouteSpec[] {
  return [
    defineRoute<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'createLteEndpoint',
      method: 'POST',
      path: '/lte-endpoint',
      summary: 'Save a new LTE endpoint (id generated when absent; 409 when it exists or IMEI + site is taken)',
      tag: TAG,
      lane: 'admin',
      sec: true,
      roles: WRITERS,
      idempotent: true,
      body: endpointBody('lte').required(),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [...STD_ERRORS, 409],
      handler: async ({ body, access, createdId }) => ok(await svc.create(body, 'lte', access, createdId)),
    }),
    defineRoute<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'updateLteEndpoint',
      method: 'POST',
      path: '/lte-endpoint/update',
      summary: 'Replace the LTE endpoint named by body.id; a stale integer version answers 409',
      tag: TAG,
      lane: 'admin',
      sec: true,
      roles: WRITERS,
      body: endpointBody('lte').required(),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [...STD_ERRORS, 404, 409],
      handler: async ({ body, access }) => {
        if (!body.id) throw new BadRequestError('body.id: required to name the LTE endpoint to update');
        return ok(await svc.replace(body.id, body, 'lte', access));
      },
    }),
    defineRoute<{ siteId: string }>({
      operationId: 'getLteEndpointsBySite',
      method: 'GET',
      path: '/lte-endpoint/site/{siteId}',
      summary: 'LTE endpoints at this site (site.id)',
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: READERS,
      params: Joi.object({ siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: Joi.array().items(lteEndpointRecord) } },
      errors: STD_ERRORS,
      handler: async ({ params, access }) => ok(await svc.queries.ltesAtSite(params.siteId, access)),
    }),
    defineRoute({
      operationId: 'sumLteDataUsage',
      method: 'GET',
      path: '/lte-endpoint/data-usage-sum',
      summary: 'Sum of dataUsage over the LTE endpoints visible to the caller, as text',
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      responses: { 200: { description: 'OK', contentType: 'text/plain', schema: Joi.string() } },
      errors: STD_ERRORS,
      handler: async ({ access }) => ({ status: 200, body: String(await svc.queries.lteDataUsageSum(access)), contentType: 'text/plain' }),
    }),
    defineRoute<{ imei: string; siteId: string }>({
      operationId: 'getLteEndpointByImeiAndSite',
      method: 'GET',
      path: '/lte-endpoint/imei/{imei}/site/{siteId}',
      summary: 'The LTE endpoint with this IMEI at this site (unique)',
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: READERS,
      params: Joi.object({ imei: value.required(), siteId: value.required() }),
      responses: { 200: { description: 'OK', schema: lteEndpointRecord } },
      errors: [...STD_ERRORS, 404],
      handler: async ({ params, access }) => ok(await svc.keys.lteByImeiAndSite(params.imei, params.siteId, access)),
    }),
    defineRoute<Record<string, never>, Record<string, never>, { criteria: LteEndpointCriteria; pageRequest: PageRequest }>({
      operationId: 'searchLteEndpoints',
      method: 'POST',
      path: '/lte-endpoint/search',
      summary: 'Page through LTE endpoints matching LteEndpointCriteria',
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: READERS,
      body: pagedLteCriteria,
      responses: { 200: { description: 'OK', schema: pageLteEndpoint } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok(await svc.queries.searchLte(body.criteria, body.pageRequest, access)),
    }),
  ];
}
