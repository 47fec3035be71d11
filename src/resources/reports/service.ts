/**
 * Host-info reports (spec 4.9): endpoint counts per value of one hostInfo field, over the
 * caller's organizations. Endpoints are read only through the endpoints resource.
 */
import type { Access } from '../../access/access.js';
import type { TermCount } from '../../store/aggregations.js';
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

export class ReportService {
  constructor(private readonly endpoints: EndpointService) {}

  /**
   * POST /report/host-info/aggregation: every value of `hostInfo.<column>` with its count of
   * non-deleted endpoints in the named orgs (exactly those; none named → the caller's subtree).
   */
  async hostInfoAggregation(criteria: ReportCriteria, access: Access): Promise<TermCount[]> {
    let scope: Query | undefined;
    if (criteria.orgIds.length > 0) {
      for (const org of criteria.orgIds) await access.assertOrg(org);
      scope = { terms: { orgId: [...new Set(criteria.orgIds)] } };
    } else {
      scope = await access.orgFilter();
    }
    return this.endpoints.queries.countsByValue(`hostInfo.${criteria.column}`, scope);
  }
}
