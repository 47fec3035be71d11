/**
 * Software inventory rules (spec 4.10), one endpoint's inventory: the endpoint is reached
 * through EndpointService.getVisible (404/403, agents only their own). The organization
 * views are `org` (org-views.ts).
 */
import type { Access } from '../../access/access.js';
import { NotFoundError, PayloadTooLargeError, ValidationError } from '../../errors.js';
import { toPage, type Page } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import type { Query, WriteOptions } from '../../store/doc-store.js';
import { PitSearch } from '../../store/scan.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import {
  DEFAULT_LAST_SEEN_REFRESH_MS,
  INVENTORY_SORT_FIELDS,
  MAX_INVENTORY_ITEMS,
  dedupe,
  diffUnique,
  reportDigest,
  softwareId,
  toInventoryDoc,
  toRecord,
  type EndpointInstalledSoftware,
  type InstalledSoftware,
  type InventoryOwner,
  type SoftwareChange,
  type SoftwareInventoryDoc,
} from './model.js';
import { criteriaFilters, MAX_LIST_ITEMS, OrgSoftwareInventory, type PagedSearch } from './org-views.js';
import type { SoftwareInventoryStore } from './store.js';
import { holdsReport, type InventoryDigests } from './digests.js';

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

function byNameVersion(a: SoftwareInventoryDoc, b: SoftwareInventoryDoc): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

function assertSameName(pathName: string, bodyName: string | undefined): void {
  if (bodyName !== undefined && bodyName !== pathName) {
    throw new ValidationError(`body.name: "${bodyName}" differs from the name in the path ("${pathName}")`);
  }
}

export class SoftwareInventoryService {
  private readonly lastSeenRefreshMs: number;
  /** The organization views: lists and summaries of exactly one organization. */
  readonly org: OrgSoftwareInventory;
  /** Presence of the endpoints (set by the service container); a report is a sign of life. */
  presence?: { seenAuthorized(endpointId: string): Promise<void> };

  constructor(
    private readonly store: SoftwareInventoryStore,
    private readonly digests: InventoryDigests,
    private readonly endpoints: EndpointService,
    orgs: OrganizationService,
    opts: SoftwareInventoryOptions = {},
  ) {
    this.lastSeenRefreshMs = opts.lastSeenRefreshMs ?? DEFAULT_LAST_SEEN_REFRESH_MS;
    this.org = new OrgSoftwareInventory(store, endpoints, orgs, opts.maxListItems ?? MAX_LIST_ITEMS);
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

  /**
   * The agent's full inventory: afterwards the stored inventory equals `items` (413 beyond the
   * bound). A report whose digest the endpoint already holds, within the lastSeen window, is
   * answered without reading the entries (docs/adr/0151-an-unchanged-inventory-report-read-by-its-digest.md).
   */
  async replaceForEndpoint(endpointId: string, items: InstalledSoftware[], access: Access): Promise<ReplaceResult> {
    const unique = dedupe(items);
    if (unique.length > MAX_INVENTORY_ITEMS) {
      throw new PayloadTooLargeError(
        `the inventory has ${unique.length} distinct entries; at most ${MAX_INVENTORY_ITEMS} are accepted`,
      );
    }
    // The digest is read beside the endpoint and used only once the endpoint is known visible.
    const [owner, held] = await Promise.all([this.owner(endpointId, access), this.digests.read(endpointId)]);
    const digest = reportDigest(owner.orgId, unique);
    const report = holdsReport(held, digest, Date.now(), this.lastSeenRefreshMs)
      ? Promise.resolve({ created: 0, updated: 0, deleted: 0, unchanged: unique.length })
      : this.writeInventory(owner, unique, digest, {});
    // A full report is a sign of life; its lastSeen rides on the bookkeeping group commit, beside the inventory writes.
    const [result] = await Promise.all([report, this.presence?.seenAuthorized(owner.id)]);
    return result;
  }

  /**
   * The bulk path of a full report, for an endpoint already authorized: one search for the
   * stored entries, the diff in code, one bulk request for creates, updates and deletes
   * (none when nothing changed), and the report's digest. `items` are de-duplicated (dedupe's output).
   */
  replaceInventory(owner: InventoryOwner, items: InstalledSoftware[], opts: WriteOptions = {}): Promise<ReplaceResult> {
    return this.writeInventory(owner, items, reportDigest(owner.orgId, items), opts);
  }

  private async writeInventory(owner: InventoryOwner, items: InstalledSoftware[], digest: string, opts: WriteOptions): Promise<ReplaceResult> {
    // Opened before the entries are read, so any write to them from here on keeps this report's digest from being set.
    const opened = await this.digests.open(owner.id);
    // Whole entries, not their compared fields alone (model.ts InventoryDiffEntry says why).
    const stored = await this.store.allMatching({ term: { endpointId: owner.id } });
    const diff = diffUnique(owner, items, stored, new Date(), this.lastSeenRefreshMs);
    const writes = diff.upserts.length > 0 || diff.deletes.length > 0;
    // A report whose digest is not set after it wrote (refused: another write opened since; or a
    // failure part way) withdraws it after its writes: a report that read before them may have set
    // its own meanwhile (docs/adr/0152-a-refused-report-withdraws-the-digest-after-its-writes.md).
    let set: boolean;
    try {
      if (writes) {
        // Searchable before the answer (the next report's diff reads through search), through the
        // store's refresh shared with concurrent reports.
        await this.store.bulkWrite(diff.upserts, diff.deletes, opts);
      }
      set = await this.digests.close(owner.id, opened, digest, diff.lastSeenFloor);
    } catch (err) {
      // The failure is the answer (the agent sends the report again); a withdrawal that fails
      // as well leaves the digest to the lastSeen window.
      if (writes) await this.digests.open(owner.id).catch(() => undefined);
      throw err;
    }
    if (!set && writes) await this.digests.open(owner.id);
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
    const stored = await this.store.upsert(doc.id, fields, doc);
    await this.digests.open(owner.id);
    return toRecord(stored);
  }

  /** Removes one uninstalled product; 404 when the endpoint does not have that name and version. */
  async remove(endpointId: string, name: string, item: Partial<InstalledSoftware> & { version: string }, access: Access): Promise<void> {
    assertSameName(name, item.name);
    const owner = await this.owner(endpointId, access);
    if (!(await this.store.deleteIfExists(softwareId(owner.id, name, item.version)))) {
      throw new NotFoundError(`software "${name}" version "${item.version}" is not installed on endpoint ${owner.id}`);
    }
    await this.digests.open(owner.id);
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
    await this.digests.open(owner.id);
    return toRecord(moved);
  }

  // ---- deep reads: cursors and exports (src/http/deep-paging.ts) ----

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
}
