/** Endpoints of the three families: searches, counts, aggregations, one record. */
import { API, client, unwrap } from './client';
import { singleOrg, type Scope } from './scope';
import type { Body, Ok } from './types';

export type AgentPage = Ok<'searchEndpoints'>;
export type UtmPage = Ok<'searchUtmEndpoints'>;
export type LtePage = Ok<'searchLteEndpoints'>;
export type AgentSortField = NonNullable<NonNullable<Body<'searchEndpoints'>['pageRequest']>['sort']>[number]['field'];
export type UtmSortField = NonNullable<NonNullable<Body<'searchUtmEndpoints'>['pageRequest']>['sort']>[number]['field'];
export type LteSortField = NonNullable<NonNullable<Body<'searchLteEndpoints'>['pageRequest']>['sort']>[number]['field'];
export type ConnectionStatus = NonNullable<Body<'countUtmEndpoints'>['connectionStatuses']>[number];
export type AnyEndpoint = Ok<'getEndpoint'>;

export const CONNECTION_STATUSES: ConnectionStatus[] = ['CONNECTED', 'POTENTIALLY_DISCONNECTED', 'DISCONNECTED', 'NEVER', 'UNINSTALLED'];

export interface Paging<F extends string> {
  page: number;
  size: number;
  sort?: { field: F; direction: 'ASC' | 'DESC' };
}

function pageRequest<F extends string>(p: Paging<F>) {
  return { page: p.page, size: p.size, ...(p.sort ? { sort: [p.sort] } : {}) };
}

export interface AgentFilter {
  basic?: string;
  /** false hides endpoints neither connected nor seen within `hideInactiveAfterDays`. */
  showInactive: boolean;
  hideInactiveAfterDays?: number;
}

/** Agents of the scope (POST /endpoint/page-search). */
export function searchAgents(scope: Scope, f: AgentFilter, p: Paging<AgentSortField>): Promise<AgentPage> {
  const orgId = singleOrg(scope);
  return unwrap(
    client.POST(`${API}/endpoint/page-search`, {
      body: {
        criteria: {
          ...(f.basic ? { basic: f.basic } : {}),
          ...(orgId ? { orgId } : {}),
          ...(f.showInactive ? {} : { showInactiveEndpoints: false, ...(f.hideInactiveAfterDays !== undefined ? { hideInactiveAfterDays: f.hideInactiveAfterDays } : {}) }),
        },
        pageRequest: pageRequest(p),
      },
    }),
  );
}

/** UTM endpoints of the scope (POST /utm-endpoint/searchPage). */
export function searchUtm(scope: Scope, statuses: ConnectionStatus[], p: Paging<UtmSortField>): Promise<UtmPage> {
  return unwrap(
    client.POST(`${API}/utm-endpoint/searchPage`, {
      body: {
        criteria: { orgId: scope.orgId, includeChildren: scope.includeChildren, ...(statuses.length ? { connectionStatuses: statuses } : {}) },
        pageRequest: pageRequest(p),
      },
    }),
  );
}

/** LTE endpoints of the scope (POST /lte-endpoint/search). */
export function searchLte(scope: Scope, p: Paging<LteSortField>, dataUsageGreaterThen?: number): Promise<LtePage> {
  return unwrap(
    client.POST(`${API}/lte-endpoint/search`, {
      body: {
        criteria: { orgId: scope.orgId, includeChildren: scope.includeChildren, ...(dataUsageGreaterThen !== undefined ? { dataUsageGreaterThen } : {}) },
        pageRequest: pageRequest(p),
      },
    }),
  );
}

/** UTM endpoints of the scope with the given connection status (POST /utm-endpoint/count). */
export async function countUtm(scope: Scope, status: ConnectionStatus): Promise<number> {
  const r = await unwrap(
    client.POST(`${API}/utm-endpoint/count`, { body: { orgId: scope.orgId, includeChildren: scope.includeChildren, connectionStatuses: [status] } }),
  );
  return r.count;
}

/** UTM endpoints of the scope by model (POST /utm-endpoint/model/aggregation). */
export function utmModels(scope: Scope): Promise<Ok<'aggregateUtmEndpointModels'>> {
  return unwrap(client.POST(`${API}/utm-endpoint/model/aggregation`, { body: { orgId: scope.orgId, includeChildren: scope.includeChildren } }));
}

/** The sum of dataUsage over every LTE endpoint the token sees (GET /lte-endpoint/data-usage-sum, text). */
export async function lteDataUsageSum(): Promise<number> {
  const text = await unwrap<string>(client.GET(`${API}/lte-endpoint/data-usage-sum`, { parseAs: 'text' }));
  return Number(text);
}

/** One endpoint of any family (GET /endpoint/{id}). */
export function getEndpoint(id: string): Promise<AnyEndpoint> {
  return unwrap(client.GET(`${API}/endpoint/{id}`, { params: { path: { id } } }));
}

export type StatusBucket = Ok<'aggregateEndpointConnectionStatuses'>[number];

/** Endpoints of the scope by family and connection status (GET /endpoint/connection-status/aggregation, extension). */
export function statusesByFamily(scope: Scope): Promise<StatusBucket[]> {
  return unwrap(
    client.GET(`${API}/endpoint/connection-status/aggregation`, { params: { query: { orgId: scope.orgId, includeChildren: scope.includeChildren } } }),
  );
}
