/**
 * Software inventory of one organization (spec 4.10): lists and summaries that cover exactly
 * that organization (not its subtree) and leave out deleted and uninstalled endpoints, asked
 * of the endpoints resource at query time (docs/adr/0046-software-inventory-org-views.md).
 */
import type { estypes } from '@elastic/elasticsearch';
import type { Access } from '../../access/access.js';
import { BadRequestError, ValidationError } from '../../errors.js';
import { toPage, type Page } from '../../domain.js';
import { RESULT_WINDOW } from '../../store/page-query.js';
import type { PageRequest, SortOrder } from '../../domain.js';
import { compositeAll, type AfterKey } from '../../store/aggregations.js';
import type { Query } from '../../store/doc-store.js';
import { CompositeSearch } from '../../store/scan.js';
import { anyOf } from '../../store/terms.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import {
  splitPairKey,
  toRecord,
  type EndpointInstalledSoftware,
  type EndpointInstalledSoftwareCount,
  type EndpointInstalledSoftwareWithName,
  type SoftwareInventoryDoc,
  type SoftwareInventorySearchCriteria,
} from './model.js';
import { COMPOSITE_CHUNK, type SoftwareInventoryStore, type SourceOrder } from './store.js';

/** Most entries (or pairs) an organization array view returns; more → 400 naming the paged view. */
export const MAX_LIST_ITEMS = 100_000;

/** Endpoints fetched per mget when adding endpoint names. */
const NAME_BATCH = 1000;

export interface PagedSearch {
  criteria: SoftwareInventorySearchCriteria;
  pageRequest: PageRequest;
}

const BY_NAME_VERSION_ENDPOINT: estypes.SortCombinations[] = [
  { name: 'asc' },
  { version: 'asc' },
  { endpointId: 'asc' },
  { id: 'asc' },
];
const BY_ENDPOINT: estypes.SortCombinations[] = [{ endpointId: 'asc' }, { id: 'asc' }];

export function criteriaFilters(c: SoftwareInventorySearchCriteria): Query[] {
  const out: Query[] = [];
  if (c.name) out.push({ term: { name: c.name } });
  if (c.namePrefix) out.push({ prefix: { name: { value: c.namePrefix, case_insensitive: true } } });
  if (c.version) out.push({ term: { version: c.version } });
  if (c.vendor) out.push({ term: { vendor: c.vendor } });
  return out;
}

const direction = (o: SortOrder): SourceOrder => (o.direction === 'DESC' ? 'desc' : 'asc');

export class OrgSoftwareInventory {
  constructor(
    private readonly store: SoftwareInventoryStore,
    private readonly endpoints: EndpointService,
    private readonly orgs: OrganizationService,
    private readonly maxListItems: number,
  ) {}

  private async orgScope(orgId: string, access: Access): Promise<void> {
    await access.assertOrg(orgId);
    await this.orgs.assertExists(orgId);
  }

  /** Entries of exactly this organization, without deleted or uninstalled endpoints. */
  private async orgQuery(orgId: string, filters: Query[] = []): Promise<Query> {
    const excluded = await this.endpoints.queries.inactiveIds(orgId);
    return { bool: { filter: [{ term: { orgId } }, ...filters], ...(excluded.length ? { must_not: [anyOf('endpointId', excluded)] } : {}) } };
  }

  private async boundedList(orgId: string, query: Query, sort: estypes.SortCombinations[]): Promise<SoftwareInventoryDoc[]> {
    const res = await this.store.bounded(query, sort, this.maxListItems);
    if (!res.items) {
      throw new BadRequestError(
        `organization ${orgId} has ${res.total} matching inventory entries, more than the ${this.maxListItems} this list returns; ` +
          'use POST /org/{id}/software-inventory-summary/search-page or GET /org/{id}/software-inventory/{software-name}/{software-version}',
      );
    }
    return res.items;
  }

  /** Every entry of the organization's endpoints (bounded), by name, version and endpoint. */
  async listForOrg(orgId: string, access: Access): Promise<EndpointInstalledSoftware[]> {
    await this.orgScope(orgId, access);
    const docs = await this.boundedList(orgId, await this.orgQuery(orgId), BY_NAME_VERSION_ENDPOINT);
    return docs.map(toRecord);
  }

  /** The organization's entries of one name and version, by endpoint. */
  async listForOrgSoftware(orgId: string, name: string, version: string, access: Access): Promise<EndpointInstalledSoftware[]> {
    await this.orgScope(orgId, access);
    const query = await this.orgQuery(orgId, [{ term: { name } }, { term: { version } }]);
    return (await this.boundedList(orgId, query, BY_ENDPOINT)).map(toRecord);
  }

  /** As listForOrgSoftware, with each endpoint's displayName (one mget per 1,000 entries). */
  async listForOrgSoftwareWithNames(
    orgId: string,
    name: string,
    version: string,
    access: Access,
  ): Promise<EndpointInstalledSoftwareWithName[]> {
    const records = await this.listForOrgSoftware(orgId, name, version, access);
    const out: EndpointInstalledSoftwareWithName[] = [];
    for (let i = 0; i < records.length; i += NAME_BATCH) {
      const batch = records.slice(i, i + NAME_BATCH);
      const names = await this.endpoints.queries.displayNames([...new Set(batch.map((r) => r.endpointId))]);
      for (const r of batch) {
        const endpointName = names.get(r.endpointId);
        out.push(endpointName ? { ...r, endpointName } : r);
      }
    }
    return out;
  }

  /** Endpoints per (name, version) in the organization, by name and version (bounded). */
  async summary(orgId: string, access: Access): Promise<EndpointInstalledSoftwareCount[]> {
    await this.orgScope(orgId, access);
    const query = await this.orgQuery(orgId);
    const sources = [
      { field: 'name' as const, order: 'asc' as const },
      { field: 'version' as const, order: 'asc' as const },
    ];
    return compositeAll((after, chunk) => this.store.pairsComposite(query, sources, chunk, after, false), {
      chunk: COMPOSITE_CHUNK,
      max: this.maxListItems,
      tooMany: () =>
        new BadRequestError(
          `organization ${orgId} has more than ${this.maxListItems} distinct software name and version pairs; ` +
            'use POST /org/{id}/software-inventory-summary/search-page',
        ),
    });
  }

  /**
   * One page of the summary. Sorted by name/version it walks a composite aggregation (no
   * depth limit: reaching page p costs ceil((p+1)·size / 10,000) round trips); sorted by
   * count (which must then be the first sort field) it asks a terms aggregation ordered by
   * count for the first (p+1)·size pairs, so count-sorted pages end at the 10,000th pair.
   * totalCount is the number of distinct pairs: exact up to 50,000, a cardinality estimate beyond.
   */
  async summaryPage(orgId: string, req: PagedSearch, access: Access): Promise<Page<EndpointInstalledSoftwareCount>> {
    await this.orgScope(orgId, access);
    const pr = req.pageRequest;
    const sort = pr.sort ?? [];
    const countAt = sort.findIndex((s) => s.field === 'count');
    if (countAt > 0) throw new ValidationError('pageRequest.sort: count may only be the first sort field');
    const query = await this.orgQuery(orgId, criteriaFilters(req.criteria));
    const skip = pr.page * pr.size;
    const end = skip + pr.size;

    if (countAt === 0) {
      if (end > RESULT_WINDOW) {
        throw new BadRequestError(
          `pageRequest reaches pair ${end}; count-sorted pages end at the ${RESULT_WINDOW}th pair; sort by name to page further or narrow the criteria`,
        );
      }
      const keyOrder = sort.find((s) => s.field !== 'count');
      const res = await this.store.pairsByCount(query, end, direction(sort[0]), keyOrder ? direction(keyOrder) : 'asc');
      const items = res.keys.slice(skip, end).map((k) => ({ ...splitPairKey(k.key), count: k.count }));
      return toPage(pr, res.distinct, items);
    }

    const sources = compositeSources(sort);
    const items: EndpointInstalledSoftwareCount[] = [];
    let distinct = 0;
    let seen = 0;
    let after: AfterKey | undefined;
    for (let first = true; seen < end; first = false) {
      const want = Math.min(COMPOSITE_CHUNK, end - seen);
      const res = await this.store.pairsComposite(query, sources, want, after, first);
      if (first) distinct = res.distinct ?? 0;
      res.buckets.forEach((b, i) => {
        if (seen + i >= skip) items.push(b);
      });
      seen += res.buckets.length;
      if (res.buckets.length < want || !res.after) break;
      after = res.after;
    }
    return toPage(pr, distinct, items);
  }

  /**
   * summaryPage in name/version order, page after page of the composite aggregation (its
   * after-key is the position). Count order has no after-key (a terms aggregation ends at the
   * 10,000th pair), so a cursor or an export of the summary is in name/version order only.
   */
  async deepSummary(orgId: string, req: PagedSearch, access: Access): Promise<CompositeSearch<EndpointInstalledSoftwareCount>> {
    await this.orgScope(orgId, access);
    const sort = req.pageRequest.sort ?? [];
    if (sort.some((s) => s.field === 'count')) {
      throw new ValidationError('pageRequest.sort: a cursor or an export of the summary is in name and version order (count-sorted pages end at the 10,000th pair)');
    }
    const sources = compositeSources(sort);
    const query = await this.orgQuery(orgId, criteriaFilters(req.criteria));
    return new CompositeSearch(async (after, size, withTotal) => {
      const res = await this.store.pairsComposite(query, sources, size, after, withTotal);
      return { items: res.buckets, after: res.after, total: res.distinct };
    });
  }
}

/** The composite aggregation's sources in the page's name/version order (both, name first unless sorted otherwise). */
function compositeSources(sort: SortOrder[]): { field: 'name' | 'version'; order: SourceOrder }[] {
  const sources: { field: 'name' | 'version'; order: SourceOrder }[] = [];
  for (const s of sort) {
    if ((s.field === 'name' || s.field === 'version') && !sources.some((x) => x.field === s.field)) {
      sources.push({ field: s.field, order: direction(s) });
    }
  }
  for (const field of ['name', 'version'] as const) {
    if (!sources.some((x) => x.field === field)) sources.push({ field, order: 'asc' });
  }
  return sources;
}
