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
  /** Connection statuses (presence applied by the service); empty: any. */
  statuses?: ConnectionStatus[];
}

/** The agents' EndpointCriteria for a scope and filter (the page search's, an export's and a job's). */
export function agentCriteria(scope: Scope, f: AgentFilter): NonNullable<Body<'searchEndpoints'>['criteria']> {
  const orgId = singleOrg(scope);
  return {
    ...(f.basic ? { basic: f.basic } : {}),
    ...(orgId ? { orgId } : {}),
    ...(f.statuses?.length ? { connectionStatuses: f.statuses } : {}),
    ...(f.showInactive ? {} : { showInactiveEndpoints: false, ...(f.hideInactiveAfterDays !== undefined ? { hideInactiveAfterDays: f.hideInactiveAfterDays } : {}) }),
  };
}

export function agentSearchBody(scope: Scope, f: AgentFilter, p: Paging<AgentSortField>): Body<'searchEndpoints'> {
  return { criteria: agentCriteria(scope, f), pageRequest: pageRequest(p) };
}

/** Agents of the scope (POST /endpoint/page-search). */
export function searchAgents(scope: Scope, f: AgentFilter, p: Paging<AgentSortField>): Promise<AgentPage> {
  return unwrap(client.POST(`${API}/endpoint/page-search`, { body: agentSearchBody(scope, f, p) }));
}

export function utmSearchBody(scope: Scope, statuses: ConnectionStatus[], p: Paging<UtmSortField>): Body<'searchUtmEndpoints'> {
  return {
    criteria: { orgId: scope.orgId, includeChildren: scope.includeChildren, ...(statuses.length ? { connectionStatuses: statuses } : {}) },
    pageRequest: pageRequest(p),
  };
}

/** UTM endpoints of the scope (POST /utm-endpoint/searchPage). */
export function searchUtm(scope: Scope, statuses: ConnectionStatus[], p: Paging<UtmSortField>): Promise<UtmPage> {
  return unwrap(client.POST(`${API}/utm-endpoint/searchPage`, { body: utmSearchBody(scope, statuses, p) }));
}

export function lteSearchBody(scope: Scope, p: Paging<LteSortField>, dataUsageGreaterThen?: number): Body<'searchLteEndpoints'> {
  return {
    criteria: { orgId: scope.orgId, includeChildren: scope.includeChildren, ...(dataUsageGreaterThen !== undefined ? { dataUsageGreaterThen } : {}) },
    pageRequest: pageRequest(p),
  };
}

/** LTE endpoints of the scope (POST /lte-endpoint/search). */
export function searchLte(scope: Scope, p: Paging<LteSortField>, dataUsageGreaterThen?: number): Promise<LtePage> {
  return unwrap(client.POST(`${API}/lte-endpoint/search`, { body: lteSearchBody(scope, p, dataUsageGreaterThen) }));
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

export interface StatusBucket {
  family: 'agent' | 'utm';
  connectionStatus: ConnectionStatus;
  count: number;
}

/**
 * Agents and UTM endpoints of the scope by connection status, presence applied (stale CONNECTED
 * ones count as POTENTIALLY_DISCONNECTED): POST /endpoint/connection-status/aggregation (agents,
 * EndpointCriteria: one organization) and POST /utm-endpoint/connection-status/aggregation (UTM,
 * with children), both extensions. LTE endpoints have no status aggregation.
 */
export async function statusesByFamily(scope: Scope): Promise<StatusBucket[]> {
  const orgId = singleOrg(scope);
  const [agents, utm] = await Promise.all([
    unwrap(client.POST(`${API}/endpoint/connection-status/aggregation`, { body: orgId ? { orgId } : {} })),
    unwrap(client.POST(`${API}/utm-endpoint/connection-status/aggregation`, { body: { orgId: scope.orgId, includeChildren: scope.includeChildren } })),
  ]);
  return [
    ...agents.map((b) => ({ family: 'agent' as const, connectionStatus: b.key, count: b.count })),
    ...utm.map((b) => ({ family: 'utm' as const, connectionStatus: b.key, count: b.count })),
  ];
}
