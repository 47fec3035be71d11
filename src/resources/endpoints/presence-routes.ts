/** Presence extension routes (issue 16): endpoints per connection status, presence applied. */
import Joi from 'joi';
import { READERS, type Access } from '../../http/auth.js';
import { defineRoute, ok, STD_ERRORS, type RouteSpec } from '../../http/routes.js';
import { endpointCriteriaQuery, utmCriteriaQuery, type EndpointCriteria, type UtmCriteria } from './criteria.js';
import { CONNECTION_STATUSES, type ConnectionStatus } from './model.js';
import { countByConnectionStatus, type EndpointPresence } from './presence.js';
import { ENDPOINT_CRITERIA, UTM_CRITERIA } from './schema.js';
import type { EndpointStore } from './store.js';

const TAG = 'endpoint';

const statusBucket = Joi.object({
  key: Joi.string()
    .valid(...CONNECTION_STATUSES)
    .required(),
  count: Joi.number().integer().min(0).required(),
}).label('ConnectionStatusBucket');

const buckets = Joi.array().items(statusBucket).description('one bucket per ConnectionStatus that some matching record has, in the enum order');

/** Counts per status of the records a criteria query selects. */
export class ConnectionStatusCounts {
  constructor(
    private readonly store: EndpointStore,
    private readonly presence: EndpointPresence,
  ) {}

  async agents(c: EndpointCriteria, access: Access): Promise<{ key: ConnectionStatus; count: number }[]> {
    const view = await this.presence.view();
    const query = endpointCriteriaQuery(c, await access.resolveOrgs(c.orgId, false), view.nowMs, view);
    return countByConnectionStatus(this.store, query, view);
  }

  async utms(c: UtmCriteria, access: Access): Promise<{ key: ConnectionStatus; count: number }[]> {
    const view = await this.presence.view();
    const query = utmCriteriaQuery(c, await access.resolveOrgs(c.orgId, c.includeChildren ?? false), view);
    return countByConnectionStatus(this.store, query, view);
  }
}

export function presenceRoutes(counts: ConnectionStatusCounts): RouteSpec[] {
  return [
    defineRoute<Record<string, never>, Record<string, never>, EndpointCriteria>({
      operationId: 'aggregateEndpointConnectionStatuses',
      method: 'POST',
      path: '/endpoint/connection-status/aggregation',
      summary: 'Agents matching EndpointCriteria per connection status (presence applied: stale CONNECTED ones count as POTENTIALLY_DISCONNECTED)',
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      extension: true,
      body: ENDPOINT_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: buckets } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok(await counts.agents(body, access)),
    }),
    defineRoute<Record<string, never>, Record<string, never>, UtmCriteria>({
      operationId: 'aggregateUtmEndpointConnectionStatuses',
      method: 'POST',
      path: '/utm-endpoint/connection-status/aggregation',
      summary: 'UTM endpoints matching UtmCriteria per connection status (presence applied)',
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      extension: true,
      body: UTM_CRITERIA.default({}),
      responses: { 200: { description: 'OK', schema: buckets } },
      errors: STD_ERRORS,
      handler: async ({ body, access }) => ok(await counts.utms(body, access)),
    }),
  ];
}
