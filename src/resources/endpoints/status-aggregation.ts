/**
 * Live endpoints by family and connection status (beyond the spec, issue 13): the console's
 * "endpoints by type and connection status" in one answer, where the spec counts statuses for
 * UTM endpoints only. One terms aggregation per family, in parallel, within the caller's subtree.
 */
import Joi from 'joi';
import { READERS, type Access } from '../../http/auth.js';
import { defineRoute, ok, STD_ERRORS, type RouteSpec } from '../../http/routes.js';
import { id } from '../../http/schemas.js';
import { familyQuery } from './criteria.js';
import { CONNECTION_STATUSES, type Family } from './model.js';
import type { EndpointStore } from './store.js';

const FAMILIES: readonly Family[] = ['agent', 'utm', 'lte'];

export interface StatusBucket {
  family: Family;
  connectionStatus: string;
  count: number;
}

export class ConnectionStatusAggregation {
  constructor(private readonly store: EndpointStore) {}

  /** Buckets of every family and status with endpoints, families in order, then by status. */
  async byFamily(orgId: string | undefined, includeChildren: boolean, access: Access): Promise<StatusBucket[]> {
    const orgs = await access.resolveOrgs(orgId, includeChildren);
    const per = await Promise.all(FAMILIES.map((f) => this.store.termsAll(familyQuery(f, orgs), 'connectionStatus')));
    return FAMILIES.flatMap((family, i) =>
      per[i].map((b) => ({ family, connectionStatus: b.key, count: b.count })).sort((a, b) => (a.connectionStatus < b.connectionStatus ? -1 : 1)),
    );
  }
}

const bucket = Joi.object({
  family: Joi.string().valid(...FAMILIES).required().description('agent (VC_ENDPOINT), utm (EXTERNAL_UTM, VC_UTM) or lte (VC_LTE)'),
  connectionStatus: Joi.string().valid(...CONNECTION_STATUSES).required(),
  count: Joi.number().integer().min(0).required(),
}).label('ConnectionStatusBucket');

export function connectionStatusRoutes(agg: ConnectionStatusAggregation): RouteSpec[] {
  return [
    defineRoute<Record<string, never>, { orgId?: string; includeChildren: boolean }>({
      operationId: 'aggregateEndpointConnectionStatuses',
      method: 'GET',
      path: '/endpoint/connection-status/aggregation',
      summary: 'Live endpoints by family and connection status, within the organization (and its children) or everything the caller sees',
      tag: 'endpoint',
      lane: 'heavy',
      sec: true,
      roles: READERS,
      extension: true,
      query: Joi.object({
        orgId: id.description('the organization; absent: every organization the caller sees'),
        includeChildren: Joi.boolean().default(false),
      }),
      responses: { 200: { description: 'OK', schema: Joi.array().items(bucket) } },
      errors: STD_ERRORS,
      handler: async ({ query, access }) => ok(await agg.byFamily(query.orgId, query.includeChildren, access)),
    }),
  ];
}
