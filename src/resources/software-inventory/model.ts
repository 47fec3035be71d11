/**
 * Software inventory records (spec 4.10; their fields are designed here, see
 * docs/adr/0045-software-inventory-per-endpoint.md) and the pure logic of a full inventory report: deterministic ids,
 * de-duplication and the diff against what is stored.
 */
import crypto from 'node:crypto';

/** What an agent reports for one installed product. */
export interface InstalledSoftware {
  name: string;
  version: string;
  vendor?: string;
  /** ISO 8601 date-time. */
  installDate?: string;
  architecture?: string;
}

/** The stored document: one per (endpoint, software name, version). */
export interface SoftwareInventoryDoc extends InstalledSoftware {
  id: string;
  endpointId: string;
  orgId: string;
  /** Internal: `name` and `version` joined by PAIR_SEPARATOR, the key of the summary aggregations. */
  nameVersion: string;
  firstSeen: string;
  lastSeen: string;
}

/** What the API returns for one stored entry. */
export type EndpointInstalledSoftware = Omit<SoftwareInventoryDoc, 'nameVersion'>;

export interface EndpointInstalledSoftwareWithName extends EndpointInstalledSoftware {
  /** The endpoint's displayName (absent when the endpoint has none). */
  endpointName?: string;
}

export interface EndpointInstalledSoftwareCount {
  name: string;
  version: string;
  /** Number of endpoints that have this name and version. */
  count: number;
}

export interface SoftwareChange {
  version: string;
  previousVersion?: string;
}

export interface SoftwareInventorySearchCriteria {
  name?: string;
  namePrefix?: string;
  version?: string;
  vendor?: string;
}

/** The endpoint an inventory belongs to. */
export interface InventoryOwner {
  id: string;
  orgId: string;
}

/** Most entries one full report may carry; more → 413. */
export const MAX_INVENTORY_ITEMS = 10_000;

/**
 * An unchanged entry's lastSeen is rewritten only when it is at least this old, so a
 * repeated report within the window writes nothing at all (docs/adr/0045-software-inventory-per-endpoint.md).
 */
export const DEFAULT_LAST_SEEN_REFRESH_MS = 24 * 60 * 60 * 1000;

/** API sort fields of an endpoint's inventory page → indexed fields. */
export const INVENTORY_SORT_FIELDS: Readonly<Record<string, string>> = {
  name: 'name',
  version: 'version',
  vendor: 'vendor',
  architecture: 'architecture',
  installDate: 'installDate',
  firstSeen: 'firstSeen',
  lastSeen: 'lastSeen',
};
/** API sort fields of the summary page. */
export const SUMMARY_SORT_FIELDS = ['name', 'version', 'count'] as const;

/** Joins name and version in `nameVersion`; names and versions may not contain control characters. */
export const PAIR_SEPARATOR = '\u001f';

/** Deterministic document id of (endpoint, name, version): repeating a report is idempotent. */
export function softwareId(endpointId: string, name: string, version: string): string {
  // JSON of the triple is unambiguous whatever the parts contain.
  return crypto.hash('sha256', JSON.stringify([endpointId, name, version]), 'base64url');
}

export function pairKey(name: string, version: string): string {
  return `${name}${PAIR_SEPARATOR}${version}`;
}

export function splitPairKey(key: string): { name: string; version: string } {
  const i = key.indexOf(PAIR_SEPARATOR);
  return i < 0 ? { name: key, version: '' } : { name: key.slice(0, i), version: key.slice(i + 1) };
}

/**
 * The digest of a de-duplicated report (dedupe's output) for an endpoint of `orgId`: equal for
 * two reports exactly when their entries are the same whatever their order, and different for
 * the same entries in another organization (the diff rewrites those). SHA-256 of the entries'
 * fields in pair order, each field in a fixed place so no two reports share a serialisation.
 */
export function reportDigest(orgId: string, unique: readonly InstalledSoftware[]): string {
  const rows = unique.map((i) => [i.name, i.version, i.vendor ?? null, i.installDate ?? null, i.architecture ?? null] as const);
  rows.sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return crypto.hash('sha256', JSON.stringify([orgId, rows]), 'base64url');
}

/** Drops empty optional fields so absent and '' are the same. */
function clean(item: InstalledSoftware): InstalledSoftware {
  const out: InstalledSoftware = { name: item.name, version: item.version };
  if (item.vendor) out.vendor = item.vendor;
  // Validation hands over a Date; stored and compared as a normalized ISO string.
  if (item.installDate) out.installDate = new Date(item.installDate).toISOString();
  if (item.architecture) out.architecture = item.architecture;
  return out;
}

/** One entry per (name, version); when a report repeats one, its last occurrence wins. */
export function dedupe(items: readonly InstalledSoftware[]): InstalledSoftware[] {
  const byKey = new Map<string, InstalledSoftware>();
  for (const item of items) {
    const key = pairKey(item.name, item.version);
    byKey.delete(key);
    byKey.set(key, clean(item));
  }
  return [...byKey.values()];
}

/** The stored document for one entry of an endpoint. */
export function toInventoryDoc(
  owner: InventoryOwner,
  item: InstalledSoftware,
  firstSeen: string,
  lastSeen: string,
): SoftwareInventoryDoc {
  return cleanToDoc(owner, clean(item), firstSeen, lastSeen);
}

/** toInventoryDoc of an entry already cleaned (dedupe's output); `id` when its stored entry's is known. */
function cleanToDoc(owner: InventoryOwner, c: InstalledSoftware, firstSeen: string, lastSeen: string, id?: string): SoftwareInventoryDoc {
  return {
    id: id ?? softwareId(owner.id, c.name, c.version),
    endpointId: owner.id,
    orgId: owner.orgId,
    name: c.name,
    version: c.version,
    nameVersion: pairKey(c.name, c.version),
    ...(c.vendor ? { vendor: c.vendor } : {}),
    ...(c.installDate ? { installDate: c.installDate } : {}),
    ...(c.architecture ? { architecture: c.architecture } : {}),
    firstSeen,
    lastSeen,
  };
}

/** The API record of a stored document (internal key dropped, nulls from partial updates dropped). */
export function toRecord(doc: SoftwareInventoryDoc): EndpointInstalledSoftware {
  const out: EndpointInstalledSoftware = {
    id: doc.id,
    endpointId: doc.endpointId,
    orgId: doc.orgId,
    name: doc.name,
    version: doc.version,
    firstSeen: doc.firstSeen,
    lastSeen: doc.lastSeen,
  };
  if (doc.vendor) out.vendor = doc.vendor;
  if (doc.installDate) out.installDate = doc.installDate;
  if (doc.architecture) out.architecture = doc.architecture;
  return out;
}

export interface InventoryDiff {
  /** Documents to write in full: new entries and entries whose fields or lastSeen change. */
  upserts: SoftwareInventoryDoc[];
  /** How many of `upserts` are new entries. */
  created: number;
  /** Ids of stored entries the report no longer has. */
  deletes: string[];
  /** Entries present in both that need no write. */
  unchanged: number;
  /** The oldest lastSeen of the stored inventory once the diff is written (now when it is empty). */
  lastSeenFloor: string;
}

/**
 * What a report's diff reads of each stored entry: the fields it compares, the times it keeps,
 * and the pair key it matches a reported entry by. The service reads whole entries for it:
 * filtering their sources cost Elasticsearch more (2.8 against 2.3 ms of CPU for 200 entries)
 * than the fields left out cost to parse here (docs/adr/0141-reads-shaped-where-they-cost-least.md).
 */
export type InventoryDiffEntry = Pick<SoftwareInventoryDoc, 'id' | 'orgId' | 'vendor' | 'installDate' | 'architecture' | 'firstSeen' | 'lastSeen'> &
  Partial<Pick<SoftwareInventoryDoc, 'nameVersion'>>;

function sameFields(a: InventoryDiffEntry, b: InstalledSoftware, orgId: string): boolean {
  return (
    a.orgId === orgId &&
    (a.vendor ?? undefined) === (b.vendor ?? undefined) &&
    (a.installDate ?? undefined) === (b.installDate ?? undefined) &&
    (a.architecture ?? undefined) === (b.architecture ?? undefined)
  );
}

/**
 * Diff of a full inventory report against the endpoint's stored entries: afterwards the
 * stored inventory equals the report. Entries present in both keep their firstSeen; they
 * are rewritten only when a field changed (or the endpoint moved organization) or their
 * lastSeen is older than `lastSeenRefreshMs`.
 */
export function diffInventory(
  owner: InventoryOwner,
  reported: readonly InstalledSoftware[],
  stored: readonly InventoryDiffEntry[],
  now: Date,
  lastSeenRefreshMs: number = DEFAULT_LAST_SEEN_REFRESH_MS,
): InventoryDiff {
  return diffUnique(owner, dedupe(reported), stored, now, lastSeenRefreshMs);
}

/**
 * diffInventory of a report already de-duplicated (dedupe's output). A reported entry finds its
 * stored one by the pair key, so only new entries have their id hashed; an entry stored without
 * the key is found by its id.
 */
export function diffUnique(
  owner: InventoryOwner,
  unique: readonly InstalledSoftware[],
  stored: readonly InventoryDiffEntry[],
  now: Date,
  lastSeenRefreshMs: number = DEFAULT_LAST_SEEN_REFRESH_MS,
): InventoryDiff {
  const nowIso = now.toISOString();
  const nowMs = now.getTime();
  const byPair = new Map<string, InventoryDiffEntry>();
  let byId: Map<string, InventoryDiffEntry> | undefined;
  for (const d of stored) {
    if (d.nameVersion !== undefined) byPair.set(d.nameVersion, d);
    else (byId ??= new Map()).set(d.id, d);
  }
  const seen = new Set<InventoryDiffEntry>();
  const upserts: SoftwareInventoryDoc[] = [];
  let created = 0;
  let unchanged = 0;
  let floorMs = nowMs;
  let lastSeenFloor = nowIso;
  for (const item of unique) {
    const old = byPair.get(pairKey(item.name, item.version)) ?? byId?.get(softwareId(owner.id, item.name, item.version));
    if (!old) {
      upserts.push(cleanToDoc(owner, item, nowIso, nowIso));
      created++;
      continue;
    }
    seen.add(old);
    const seenMs = Date.parse(old.lastSeen);
    if (sameFields(old, item, owner.orgId) && nowMs - seenMs < lastSeenRefreshMs) {
      unchanged++;
      if (seenMs < floorMs) {
        floorMs = seenMs;
        lastSeenFloor = old.lastSeen;
      }
    } else {
      upserts.push(cleanToDoc(owner, item, old.firstSeen, nowIso, old.id));
    }
  }
  const deletes: string[] = [];
  for (const d of stored) if (!seen.has(d)) deletes.push(d.id);
  return { upserts, created, deletes, unchanged, lastSeenFloor };
}
