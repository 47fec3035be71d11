/**
 * Software inventory rules (spec 4.10). Endpoint operations reach the endpoint through
 * EndpointService.getVisible (404/403, agents only their own); organization views cover
 * exactly one organization (not its subtree) and leave out deleted and uninstalled
 * endpoints, found through the endpoints store at query time (see docs/decisions.md).
 */
import type { estypes } from '@elastic/elasticsearch';
import type { Access } from '../../http/auth.js';
import { BadRequestError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../errors.js';
import { pageQuery, RESULT_WINDOW, toPage, type Page, type PageRequest, type SortOrder } from '../../http/paging.js';
import type { Query, WriteOptions } from '../../store/doc-store.js';
import { CompositeSearch, PitSearch } from '../../store/scan.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import {
  DEFAULT_LAST_SEEN_REFRESH_MS,
  INVENTORY_SORT_FIELDS,
  MAX_INVENTORY_ITEMS,
  dedupe,
  diffInventory,
  softwareId,
  splitPairKey,
  toInventoryDoc,
  toRecord,
  type EndpointInstalledSoftware,
  type EndpointInstalledSoftwareCount,
  type EndpointInstalledSoftwareWithName,
  type InstalledSoftware,
  type InventoryOwner,
  type SoftwareChange,
  type SoftwareInventoryDoc,
  type SoftwareInventorySearchCriteria,
} from './model.js';
import { COMPOSITE_CHUNK, type SoftwareInventoryStore, type SourceOrder } from './store.js';

/** Most entries (or pairs) an organization array view returns; more → 400 naming the paged view. */
export const MAX_LIST_ITEMS = 100_000;

/** Endpoints fetched per mget when adding endpoint names. */
const NAME_BATCH = 1000;
/** Ids per `terms` clause of the exclusion (below Elasticsearch's index.max_terms_count of 65,536). */
const TERMS_CHUNK = 50_000;

export interface PagedSearch {
  criteria: SoftwareInventorySearchCriteria;
  pageRequest: PageRequest;
}

export interface ReplaceResult {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
}

export interface SoftwareInventoryOptions {
  lastSeenRefreshMs?: number;
  maxListItems?: number;
}

const BY_NAME_VERSION_ENDPOINT: estypes.SortCombinations[] = [
  { name: 'asc' },
  { version: 'asc' },
  { endpointId: 'asc' },
  { id: 'asc' },
];
const BY_ENDPOINT: estypes.SortCombinations[] = [{ endpointId: 'asc' }, { id: 'asc' }];

function byNameVersion(a: SoftwareInventoryDoc, b: SoftwareInventoryDoc): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

function criteriaFilters(c: SoftwareInventorySearchCriteria): Query[] {
  const out: Query[] = [];
  if (c.name) out.push({ term: { name: c.name } });
  if (c.namePrefix) out.push({ prefix: { name: { value: c.namePrefix, case_insensitive: true } } });
  if (c.version) out.push({ term: { version: c.version } });
  if (c.vendor) out.push({ term: { vendor: c.vendor } });
  return out;
}

function assertSameName(pathName: string, bodyName: string | undefined): void {
  if (bodyName !== undefined && bodyName !== pathName) {
    throw new ValidationError(`body.name: "${bodyName}" differs from the name in the path ("${pathName}")`);
  }
}

const direction = (o: SortOrder): SourceOrder => (o.direction === 'DESC' ? 'desc' : 'asc');

export class SoftwareInventoryService {
  private readonly lastSeenRefreshMs: number;
  private readonly maxListItems: number;
  /** Issue 16: presence of the endpoints (set by the service container); a report is a sign of life. */
  presence?: { seenAuthorized(endpointId: string): Promise<void> };

  constructor(
    readonly store: SoftwareInventoryStore,
    private readonly endpoints: EndpointService,
    private readonly orgs: OrganizationService,
    opts: SoftwareInventoryOptions = {},
  ) {
    this.lastSeenRefreshMs = opts.lastSeenRefreshMs ?? DEFAULT_LAST_SEEN_REFRESH_MS;
    this.maxListItems = opts.maxListItems ?? MAX_LIST_ITEMS;
  }

  private async owner(endpointId: string, access: Access): Promise<InventoryOwner> {
    const hit = await this.endpoints.getVisible(endpointId, access);
    return { id: hit.id, orgId: hit.doc.orgId };
  }

  // ---- one endpoint ----

  /** Every entry of a visible endpoint, by name and version. */
  async listForEndpoint(endpointId: string, access: Access): Promise<EndpointInstalledSoftware[]> {
    const owner = await this.owner(endpointId, access);
    const docs = await this.store.allMatching({ term: { endpointId: owner.id } });
    return docs.sort(byNameVersion).map(toRecord);
  }

  /** The agent's full inventory: afterwards the stored inventory equals `items` (413 beyond the bound). */
  async replaceForEndpoint(endpointId: string, items: InstalledSoftware[], access: Access): Promise<ReplaceResult> {
    const unique = dedupe(items);
    if (unique.length > MAX_INVENTORY_ITEMS) {
      throw new PayloadTooLargeError(
        `the inventory has ${unique.length} distinct entries; at most ${MAX_INVENTORY_ITEMS} are accepted`,
      );
    }
    const owner = await this.owner(endpointId, access);
    // Issue 16: a full report is a sign of life; its lastSeen rides on the bookkeeping group commit, beside the inventory writes.
    const [result] = await Promise.all([this.replaceInventory(owner, unique), this.presence?.seenAuthorized(owner.id)]);
    return result;
  }

  /**
   * The bulk path of a full report, for an endpoint already authorized: one search for the
   * stored entries, the diff in code, one bulk request for creates, updates and deletes
   * (none when nothing changed).
   */
  async replaceInventory(
    owner: InventoryOwner,
    items: InstalledSoftware[],
    opts: WriteOptions = {},
  ): Promise<ReplaceResult> {
    const stored = await this.store.allMatching({ term: { endpointId: owner.id } });
    const diff = diffInventory(owner, items, stored, new Date(), this.lastSeenRefreshMs);
    if (diff.upserts.length > 0 || diff.deletes.length > 0) {
      // Searchable before the answer (the next report's diff reads through search), through the
      // store's refresh shared with concurrent reports.
      await this.store.bulkWrite(diff.upserts, diff.deletes, opts);
    }
    return {
      created: diff.created,
      updated: diff.upserts.length - diff.created,
      deleted: diff.deletes.length,
      unchanged: diff.unchanged,
    };
  }

  /** One page of a visible endpoint's inventory, filtered by the criteria. */
  async searchForEndpoint(endpointId: string, req: PagedSearch, access: Access): Promise<Page<EndpointInstalledSoftware>> {
    const owner = await this.owner(endpointId, access);
    const page = pageQuery(req.pageRequest, INVENTORY_SORT_FIELDS, [
      { field: 'name', direction: 'ASC' },
      { field: 'version', direction: 'ASC' },
    ]);
    const query: Query = { bool: { filter: [{ term: { endpointId: owner.id } }, ...criteriaFilters(req.criteria)] } };
    const res = await this.store.search(query, page);
    return toPage(
      req.pageRequest,
      res.total,
      res.items.map((h) => toRecord(h.doc)),
    );
  }

  /** Adds one newly installed product (idempotent: a repeat keeps firstSeen). */
  async add(endpointId: string, name: string, item: Partial<InstalledSoftware> & { version: string }, access: Access): Promise<EndpointInstalledSoftware> {
    assertSameName(name, item.name);
    const owner = await this.owner(endpointId, access);
    const now = new Date().toISOString();
    const doc = toInventoryDoc(owner, { ...item, name }, now, now);
    const fields: Record<string, unknown> = {
      endpointId: doc.endpointId,
      orgId: doc.orgId,
      name: doc.name,
      version: doc.version,
      nameVersion: doc.nameVersion,
      vendor: doc.vendor ?? null,
      installDate: doc.installDate ?? null,
      architecture: doc.architecture ?? null,
      lastSeen: now,
    };
    return toRecord(await this.store.upsert(doc.id, fields, doc));
  }

  /** Removes one uninstalled product; 404 when the endpoint does not have that name and version. */
  async remove(endpointId: string, name: string, item: Partial<InstalledSoftware> & { version: string }, access: Access): Promise<void> {
    assertSameName(name, item.name);
    const owner = await this.owner(endpointId, access);
    if (!(await this.store.deleteIfExists(softwareId(owner.id, name, item.version)))) {
      throw new NotFoundError(`software "${name}" version "${item.version}" is not installed on endpoint ${owner.id}`);
    }
  }

  /**
   * Moves the entry of `name` to another version. `previousVersion` picks the entry; without
   * it the endpoint must have exactly one version of `name` (400 when it has several). The
   * moved entry keeps vendor and architecture; installDate is dropped (it dated the old
   * version); firstSeen is now unless the endpoint already had the new version.
   */
  async change(endpointId: string, name: string, change: SoftwareChange, access: Access): Promise<EndpointInstalledSoftware> {
    const owner = await this.owner(endpointId, access);
    let old: SoftwareInventoryDoc | undefined;
    let target: SoftwareInventoryDoc | undefined;
    if (change.previousVersion !== undefined) {
      const oldId = softwareId(owner.id, name, change.previousVersion);
      const newId = softwareId(owner.id, name, change.version);
      const found = await this.store.getMany(oldId === newId ? [oldId] : [oldId, newId]);
      old = found.find((h) => h.id === oldId)?.doc;
      target = found.find((h) => h.id === newId)?.doc;
      if (!old) {
        throw new NotFoundError(`software "${name}" version "${change.previousVersion}" is not installed on endpoint ${owner.id}`);
      }
    } else {
      const versions = await this.store.allMatching({
        bool: { filter: [{ term: { endpointId: owner.id } }, { term: { name } }] },
      });
      if (versions.length === 0) throw new NotFoundError(`software "${name}" is not installed on endpoint ${owner.id}`);
      if (versions.length > 1) {
        const list = versions.map((v) => v.version).sort().join(', ');
        throw new ValidationError(
          `body.previousVersion: endpoint ${owner.id} has ${versions.length} versions of "${name}" (${list}); say which one changes`,
        );
      }
      old = versions[0];
    }
    if (old.version === change.version) return toRecord(old);
    const now = new Date().toISOString();
    const moved: SoftwareInventoryDoc = target
      ? { ...target, orgId: owner.orgId, lastSeen: now }
      : toInventoryDoc(owner, { name, version: change.version, vendor: old.vendor, architecture: old.architecture }, now, now);
    await this.store.bulkWrite([moved], [old.id]);
    return toRecord(moved);
  }

  // ---- one organization ----

  private async orgScope(orgId: string, access: Access): Promise<void> {
    await access.assertOrg(orgId);
    await this.orgs.assertExists(orgId);
  }

  /**
   * Ids of the org's deleted or uninstalled endpoints, asked of the endpoints store: one
   * search when there are at most 1,000 of them, a point-in-time scan beyond.
   */
  private async excludedEndpoints(orgId: string): Promise<string[]> {
    const query: Query = {
      bool: {
        filter: [{ term: { orgId } }],
        should: [{ term: { deleted: true } }, { term: { connectionStatus: 'UNINSTALLED' } }],
        minimum_should_match: 1,
      },
    };
    const first = await this.endpoints.store.search(query, {
      from: 0,
      size: 1000,
      sort: [{ id: { order: 'asc' } }],
      track_total_hits: true,
    });
    if (first.items.length >= first.total) return first.items.map((h) => h.id);
    const ids: string[] = [];
    for await (const batch of this.endpoints.store.scan(query, 5000)) for (const h of batch) ids.push(h.id);
    return ids;
  }

  /** Entries of exactly this organization, without deleted or uninstalled endpoints. */
  private async orgQuery(orgId: string, filters: Query[] = []): Promise<Query> {
    const excluded = await this.excludedEndpoints(orgId);
    const mustNot: Query[] = [];
    for (let i = 0; i < excluded.length; i += TERMS_CHUNK) {
      mustNot.push({ terms: { endpointId: excluded.slice(i, i + TERMS_CHUNK) } });
    }
    return { bool: { filter: [{ term: { orgId } }, ...filters], ...(mustNot.length ? { must_not: mustNot } : {}) } };
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
      const endpoints = await this.endpoints.store.getMany([...new Set(batch.map((r) => r.endpointId))]);
      const names = new Map(endpoints.map((e) => [e.id, e.doc.displayName]));
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
    const out: EndpointInstalledSoftwareCount[] = [];
    let after: Record<string, estypes.FieldValue> | undefined;
    for (;;) {
      const res = await this.store.pairsComposite(query, sources, COMPOSITE_CHUNK, after, false);
      out.push(...res.buckets);
      if (out.length > this.maxListItems) {
        throw new BadRequestError(
          `organization ${orgId} has more than ${this.maxListItems} distinct software name and version pairs; ` +
            'use POST /org/{id}/software-inventory-summary/search-page',
        );
      }
      if (res.buckets.length < COMPOSITE_CHUNK || !res.after) return out;
      after = res.after;
    }
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

    const sources: { field: 'name' | 'version'; order: SourceOrder }[] = [];
    for (const s of sort) {
      if ((s.field === 'name' || s.field === 'version') && !sources.some((x) => x.field === s.field)) {
        sources.push({ field: s.field, order: direction(s) });
      }
    }
    for (const field of ['name', 'version'] as const) {
      if (!sources.some((x) => x.field === field)) sources.push({ field, order: 'asc' });
    }
    const items: EndpointInstalledSoftwareCount[] = [];
    let distinct = 0;
    let seen = 0;
    let after: Record<string, estypes.FieldValue> | undefined;
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

  // ---- deep reads: cursors and exports (issue 16, src/http/deep-paging.ts) ----

  /** searchForEndpoint prepared for a point in time. */
  async deepForEndpoint(endpointId: string, req: PagedSearch, access: Access): Promise<PitSearch<SoftwareInventoryDoc, EndpointInstalledSoftware>> {
    const owner = await this.owner(endpointId, access);
    const sort = pageQuery({ ...req.pageRequest, page: 0 }, INVENTORY_SORT_FIELDS, [
      { field: 'name', direction: 'ASC' },
      { field: 'version', direction: 'ASC' },
    ]).sort;
    const query: Query = { bool: { filter: [{ term: { endpointId: owner.id } }, ...criteriaFilters(req.criteria)] } };
    return new PitSearch(this.store.docs, query, sort, (h) => toRecord(h.doc));
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
    const sources: { field: 'name' | 'version'; order: SourceOrder }[] = [];
    for (const s of sort) {
      if ((s.field === 'name' || s.field === 'version') && !sources.some((x) => x.field === s.field)) {
        sources.push({ field: s.field, order: direction(s) });
      }
    }
    for (const field of ['name', 'version'] as const) {
      if (!sources.some((x) => x.field === field)) sources.push({ field, order: 'asc' });
    }
    const query = await this.orgQuery(orgId, criteriaFilters(req.criteria));
    return new CompositeSearch(async (after, size, withTotal) => {
      const res = await this.store.pairsComposite(query, sources, size, after, withTotal);
      return { items: res.buckets, after: res.after, total: res.distinct };
    });
  }
}
