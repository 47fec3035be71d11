/**
 * Host-info reports (spec 4.9): endpoint counts per value of one hostInfo field, over the
 * caller's organizations. Endpoints are read only through the endpoints resource.
 */
import type { Access } from '../../http/auth.js';
import type { Query } from '../../store/doc-store.js';
import type { EndpointService } from '../endpoints/service.js';

export const HOST_INFO_COLUMNS = [
  'os',
  'platform',
  'platformFamily',
  'platformVersion',
  'kernelVersion',
  'kernelArch',
  'virtualizationSystem',
  'virtualizationRole',
] as const;
export type HostInfoColumn = (typeof HOST_INFO_COLUMNS)[number];

export interface ReportCriteria {
  orgIds: string[];
  column: HostInfoColumn;
}

export interface AggregationTermBucket {
  key: string;
  count: number;
}

/** Count descending, then key ascending (stable, so equal counts read alphabetically). */
export function sortBuckets(buckets: AggregationTermBucket[]): AggregationTermBucket[] {
  return [...buckets].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export class ReportService {
  constructor(private readonly endpoints: EndpointService) {}

  /**
   * POST /report/host-info/aggregation: every value of `hostInfo.<column>` with its count of
   * non-deleted endpoints in the named orgs (exactly those; none named → the caller's subtree).
   */
  async hostInfoAggregation(criteria: ReportCriteria, access: Access): Promise<AggregationTermBucket[]> {
    let orgs: string[] | undefined;
    if (criteria.orgIds.length > 0) {
      for (const org of criteria.orgIds) await access.assertOrg(org);
      orgs = [...new Set(criteria.orgIds)];
    } else {
      orgs = await access.visibleOrgs();
    }
    const filter: Query[] = [];
    if (orgs) filter.push({ terms: { orgId: orgs } });
    const query: Query = { bool: { filter, must_not: [{ term: { deleted: true } }] } };
    return sortBuckets(await this.endpoints.store.termsAll(query, `hostInfo.${criteria.column}`));
  }
}
