/**
 * Lists, page searches, counts and aggregations over endpoints, for the endpoint routes and
 * for the resources that need endpoint records (software inventory, reports).
 */
import type { Access } from '../../access/access.js';
import { toPage, type Page } from '../../domain.js';
import type { PageRequest } from '../../domain.js';
import { byCountThenKey, type TermCount } from '../../store/aggregations.js';
import type { Query } from '../../store/doc-store.js';
import { pageQuery } from '../../store/page-query.js';
import { anyOf } from '../../store/terms.js';
import {
  endpointCriteriaQuery,
  familyQuery,
  lteCriteriaQuery,
  utmCriteriaQuery,
  type EndpointCriteria,
  type LteEndpointCriteria,
  type UtmCriteria,
} from './criteria.js';
import type { ConnectionStatus, EndpointDoc, EndpointRecord, Family } from './model.js';
import { countByConnectionStatus, type PresenceView } from './presence.js';
import type { PitSearch } from '../../store/scan.js';
import { ENDPOINT_SORT, LTE_SORT, UTM_SORT } from './schema.js';
import { toEndpointRecordInPlace, type EndpointStore } from './store.js';

/** Records a list answers from one search before it streams. */
const LIST_BATCH = 1000;

export class EndpointQueries {
  constructor(
    private readonly store: EndpointStore,
    private readonly orgs: { children(orgId: string): Promise<string[]>; descendants(orgId: string): Promise<string[]> },
  ) {}

  /**
   * Every visible record of a family matching `filters`, in id order: one search when they
   * fit in one batch (the usual case), else streamed with a point in time.
   */
  private async list(family: Family, filters: Query[], access: Access): Promise<EndpointRecord[]> {
    const query = familyQuery(family, await access.orgFilter(), filters);
    return (await this.store.allMatching(query, LIST_BATCH)).map(toEndpointRecordInPlace);
  }

  utmsAtSite(siteId: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('utm', [{ term: { siteId } }], access);
  }

  utmsInNetwork(network: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('utm', [{ term: { merakiNetworkId: network } }], access);
  }

  ltesAtSite(siteId: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('lte', [{ term: { 'site.id': siteId } }], access);
  }

  /**
   * Agents of the org's direct child organizations (a list as long as the org has children), or
   * of every organization below it (its subtree without itself: two terms).
   */
  async agentsBelow(orgId: string, depth: 'children' | 'descendants', access: Access): Promise<EndpointRecord[]> {
    if (depth === 'descendants') {
      const below: Query = { bool: { filter: [await access.resolveScope(orgId, true) ?? { match_all: {} }], must_not: [{ term: { orgId } }] } };
      return this.list('agent', [below], access);
    }
    await access.assertOrg(orgId);
    const orgs = await this.orgs.children(orgId);
    if (orgs.length === 0) return [];
    // Any number of children: split below Elasticsearch's limit on one terms query.
    return this.list('agent', [anyOf('orgId', orgs)], access);
  }

  private async page(query: Query, pr: PageRequest, sort: Record<string, string>): Promise<Page<EndpointRecord>> {
    const res = await this.store.search(query, pageQuery(pr, sort));
    return toPage(pr, res.total, res.items.map(toEndpointRecordInPlace));
  }

  private async utmQuery(c: UtmCriteria, access: Access, view?: PresenceView): Promise<Query> {
    return utmCriteriaQuery(c, await access.resolveScope(c.orgId, c.includeChildren ?? false), view ?? (await this.store.presence?.view()));
  }

  /** EndpointCriteria's query over agents, presence applied (a stale CONNECTED one reads POTENTIALLY_DISCONNECTED). */
  private async agentQuery(c: EndpointCriteria, access: Access, view?: PresenceView): Promise<Query> {
    const v = view ?? (await this.store.presence?.view());
    return endpointCriteriaQuery(c, await access.resolveScope(c.orgId, false), v?.nowMs ?? Date.now(), v);
  }

  /** The presence view the status counts decide with. */
  private async presenceView(): Promise<PresenceView> {
    if (!this.store.presence) throw new Error('endpoint presence is not set up');
    return this.store.presence.view();
  }

  /** Agents matching EndpointCriteria per connection status, presence applied. */
  async agentsByConnectionStatus(c: EndpointCriteria, access: Access): Promise<{ key: ConnectionStatus; count: number }[]> {
    const view = await this.presenceView();
    return countByConnectionStatus(this.store, await this.agentQuery(c, access, view), view);
  }

  /** UTM endpoints matching UtmCriteria per connection status, presence applied. */
  async utmsByConnectionStatus(c: UtmCriteria, access: Access): Promise<{ key: ConnectionStatus; count: number }[]> {
    const view = await this.presenceView();
    return countByConnectionStatus(this.store, await this.utmQuery(c, access, view), view);
  }

  async searchUtm(c: UtmCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    return this.page(await this.utmQuery(c, access), pr, UTM_SORT);
  }

  async countUtm(c: UtmCriteria, access: Access): Promise<number> {
    return this.store.count(await this.utmQuery(c, access));
  }

  /** One bucket per model (all of them), by count descending then model. */
  async utmModelAggregation(c: UtmCriteria, access: Access): Promise<TermCount[]> {
    return (await this.store.termsAll(await this.utmQuery(c, access), 'model')).sort(byCountThenKey);
  }

  async searchLte(c: LteEndpointCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    const query = lteCriteriaQuery(c, await access.resolveScope(c.orgId, c.includeChildren ?? false));
    return this.page(query, pr, LTE_SORT);
  }

  /** Sum of dataUsage over the LTE endpoints visible to the caller. */
  async lteDataUsageSum(access: Access): Promise<number> {
    return this.store.sum(familyQuery('lte', await access.orgFilter()), 'dataUsage');
  }

  async searchAgents(c: EndpointCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    return this.page(await this.agentQuery(c, access), pr, ENDPOINT_SORT);
  }

  // ---- the page searches prepared for cursors and exports (src/http/deep-paging.ts) ----
  // The same query (the caller's organizations resolved again on every call), the same sort with
  // the id tiebreaker, the same hit-to-record mapping as the pages; page 0, since only the sort is
  // wanted here (a cursor's depth is checked by the paging layer).

  async deepAgents(c: EndpointCriteria, pr: PageRequest, access: Access): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
    return this.store.pitSearch(await this.agentQuery(c, access), pageQuery({ ...pr, page: 0 }, ENDPOINT_SORT).sort);
  }

  async deepUtm(c: UtmCriteria, pr: PageRequest, access: Access): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
    return this.store.pitSearch(await this.utmQuery(c, access), pageQuery({ ...pr, page: 0 }, UTM_SORT).sort);
  }

  async deepLte(c: LteEndpointCriteria, pr: PageRequest, access: Access): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
    const query = lteCriteriaQuery(c, await access.resolveScope(c.orgId, c.includeChildren ?? false));
    return this.store.pitSearch(query, pageQuery({ ...pr, page: 0 }, LTE_SORT).sort);
  }

  // ---- for other resources (their callers decided access) ------------------------------------

  /** Every value of a field with its count of non-deleted endpoints within `scope` (all orgs when undefined), by count then value. */
  async countsByValue(field: string, scope: Query | undefined): Promise<TermCount[]> {
    const filter: Query[] = scope ? [scope] : [];
    const query: Query = { bool: { filter, must_not: [{ term: { deleted: true } }] } };
    return (await this.store.termsAll(query, field)).sort(byCountThenKey);
  }

  /** Ids of the organization's deleted or uninstalled endpoints (exactly this org, not its subtree). */
  async inactiveIds(orgId: string): Promise<string[]> {
    const query: Query = {
      bool: {
        filter: [{ term: { orgId } }],
        should: [{ term: { deleted: true } }, { term: { connectionStatus: 'UNINSTALLED' } }],
        minimum_should_match: 1,
      },
    };
    return (await this.store.allMatching(query, LIST_BATCH, 5000)).map((h) => h.id);
  }

  /** displayName of each existing endpoint among `ids` (one multi-get). */
  async displayNames(ids: string[]): Promise<Map<string, string | undefined>> {
    const hits = await this.store.getMany(ids);
    return new Map(hits.map((e) => [e.id, e.doc.displayName]));
  }
}
