/** Presence extension routes: endpoints per connection status, presence applied. */
import Joi from 'joi';
import { READERS } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import type { EndpointCriteria, UtmCriteria } from './criteria.js';
import { CONNECTION_STATUSES } from './model.js';
import { ENDPOINT_CRITERIA, UTM_CRITERIA } from './schema.js';
import type { EndpointService } from './service.js';

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'endpoint', sec: true, roles: READERS, errors: [400, 401, 403, 500] });

const statusBucket = Joi.object({
  key: Joi.string()
    .valid(...CONNECTION_STATUSES)
    .required(),
  count: Joi.number().integer().min(0).required(),
}).label('ConnectionStatusBucket').meta({ className: 'ConnectionStatusCount' });

const buckets = Joi.array().items(statusBucket).description('one bucket per ConnectionStatus that some matching record has, in the enum order');

export function presenceRoutes(svc: EndpointService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, EndpointCriteria>({
      operationId: 'aggregateEndpointConnectionStatuses',
      method: 'POST',
      path: '/endpoint/connection-status/aggregation',
      summary: 'Agents matching EndpointCriteria per connection status (presence applied: stale CONNECTED ones count as POTENTIALLY_DISCONNECTED)',
      lane: 'heavy',
      extension: true,
      body: ENDPOINT_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: buckets } },
      handler: async ({ body, access }) => ok(await svc.queries.agentsByConnectionStatus(body, access)),
    }),
    route<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'aggregateUtmEndpointConnectionStatuses',
      method: 'POST',
      path: '/utm-endpoint/connection-status/aggregation',
      summary: 'UTM endpoints matching UtmCriteria per connection status (presence applied)',
      lane: 'heavy',
      extension: true,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: buckets } },
      handler: async ({ body, access }) => ok(await svc.queries.utmsByConnectionStatus(body, access)),
    }),
  ];
}
