/** Search criteria of spec 2.2 (UtmCriteria, LteEndpointCriteria, EndpointCriteria) → Elasticsearch queries. */
import type { Query } from '../../store/doc-store.js';
import { connectionStatusFilter, liveConnected, type PresenceView } from './presence.js';
import { FAMILY_TYPES, type ConnectionStatus, type ExternalStatus, type Family, type WanStatus } from './model.js';

export interface UtmCriteria {
  connectionStatuses?: ConnectionStatus[];
  externalStatuses?: ExternalStatus[];
  siteId?: string;
  orgId?: string;
  siteOrgName?: string;
  siteKey?: string;
  includeChildren?: boolean;
  wanStatuses?: WanStatus[];
}

export interface LteEndpointCriteria {
  orgId?: string;
  dataUsageGreaterThen?: number;
  includeChildren?: boolean;
}

export interface EndpointCriteria {
  basic?: string;
  /** Extension. */
  connectionStatuses?: ConnectionStatus[];
  orgId?: string;
  includeScannerEndpoints?: boolean;
  showInactiveEndpoints?: boolean;
  hideInactiveAfterDays?: number;
}

/** Inactivity window when showInactiveEndpoints is false and hideInactiveAfterDays is absent. */
export const DEFAULT_HIDE_INACTIVE_AFTER_DAYS = 30;

const DAY_MS = 86_400_000;

/**
 * The live (not deleted) records of a family, limited to an organization scope when given
 * (undefined: unrestricted caller; see Access.resolveScope).
 */
export function familyQuery(family: Family, scope: Query | undefined, filters: Query[] = [], mustNot: Query[] = []): Query {
  const filter: Query[] = [{ terms: { type: [...FAMILY_TYPES[family]] } }];
  if (scope) filter.push(scope);
  return { bool: { filter: [...filter, ...filters], must_not: [{ term: { deleted: true } }, ...mustNot] } };
}

function termsIfAny(field: string, values: readonly string[] | undefined): Query[] {
  return values && values.length > 0 ? [{ terms: { [field]: [...values] } }] : [];
}

/**
 * UtmCriteria: every field filters; empty lists do not. `siteKey` matches the site's id.
 * Connection statuses are matched as they read, presence applied (`presence`, presence.ts).
 */
export function utmCriteriaQuery(c: UtmCriteria, scope: Query | undefined, presence?: PresenceView): Query {
  return familyQuery('utm', scope, [
    ...connectionStatusFilter(c.connectionStatuses, presence),
    ...termsIfAny('externalStatus', c.externalStatuses),
    ...termsIfAny('wanStatus', c.wanStatuses),
    ...(c.siteId ? [{ term: { siteId: c.siteId } }] : []),
    ...(c.siteOrgName ? [{ term: { 'site.orgName': c.siteOrgName } }] : []),
    ...(c.siteKey ? [{ term: { 'site.id': c.siteKey } }] : []),
  ]);
}

export function lteCriteriaQuery(c: LteEndpointCriteria, scope: Query | undefined): Query {
  return familyQuery(
    'lte',
    scope,
    c.dataUsageGreaterThen !== undefined ? [{ range: { dataUsage: { gt: c.dataUsageGreaterThen } } }] : [],
  );
}

/**
 * EndpointCriteria over agents. `basic` is a case-insensitive, prefix-friendly free text over
 * displayName, hostInfo.hostName, lastIp, internalIps and clientVersion (all words must
 * match, the last one as a prefix). `showInactiveEndpoints: false` keeps endpoints that are
 * CONNECTED (presence applied) or connected or seen within the last `hideInactiveAfterDays` days.
 */
export function endpointCriteriaQuery(c: EndpointCriteria, scope: Query | undefined, now = Date.now(), presence?: PresenceView): Query {
  const filters: Query[] = [...connectionStatusFilter(c.connectionStatuses, presence)];
  const mustNot: Query[] = [];
  if (c.basic) filters.push({ match_bool_prefix: { basicText: { query: c.basic, operator: 'and' } } });
  if (c.includeScannerEndpoints === false) mustNot.push({ term: { scanner: true } });
  if (c.showInactiveEndpoints === false) {
    const days = c.hideInactiveAfterDays ?? DEFAULT_HIDE_INACTIVE_AFTER_DAYS;
    filters.push({
      bool: {
        should: [
          liveConnected(presence),
          { range: { lastConnect: { gte: new Date(now - days * DAY_MS).toISOString() } } },
          { range: { lastSeen: { gte: new Date(now - days * DAY_MS).toISOString() } } },
        ],
        minimum_should_match: 1,
      },
    });
  }
  return familyQuery('agent', scope, filters, mustNot);
}
