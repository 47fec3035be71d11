/**
 * Seeds a realistic data set through the service's own code (services and stores, bulk, not
 * one request per record): organizations in four levels, among them a distributor holding about
 * 70 % of them and of the endpoints, agents, UTM and LTE endpoints, software inventory and
 * network sensors. Three sizes (`--size 14k|140k|1.4m`); every id is deterministic, so
 * `--reuse` can skip seeding.
 */
import crypto from 'node:crypto';
import type { Services } from '../src/container.js';
import type { StoreContext } from '../src/store/client.js';
import { DocStore } from '../src/store/doc-store.js';
import type { OrganizationDoc } from '../src/resources/organizations/store.js';
import { bulkEndpoints, refreshIndex } from '../test/helpers/endpoint-store.js';
import type { EndpointDoc } from '../src/resources/endpoints/model.js';
import type { InstalledSoftware } from '../src/resources/software-inventory/model.js';
import { OrgLinks } from '../src/resources/organizations/org-links.js';
import { Access } from '../src/access/access.js';

/** The shape of the organization tree: one distributor and ten MSPs, four levels each. */
export interface OrgShape {
  /** distributor → resellers → customers → sites */
  resellers: number;
  customersPerReseller: number;
  sitesPerCustomer: number;
  /** each of the ten MSPs → customers → sites → locations */
  mspCustomers: number;
  mspSitesPerCustomer: number;
  mspLocationsPerSite: number;
}

export interface SeedSize {
  /** The size's name on the command line (`--size`). */
  name: SizeName;
  /** The name in its index prefix and results files (no dot). */
  slug: string;
  agents: number;
  utm: number;
  lte: number;
  inventoryEndpoints: number;
  inventoryItems: number;
  /** Network sensors (agents with the one host they report). */
  sensors: number;
  orgs: OrgShape;
}

export type SizeName = '14k' | '140k' | '1.4m';

/**
 * Endpoints and organizations grow together (about 14 endpoints per organization); software
 * inventory and network sensors stay at the 140k size's 2,000 endpoints: their scenarios are
 * point operations on one endpoint, and 400,000 inventory entries already exceed what one
 * endpoint's search touches.
 */
export const SIZES: Record<SizeName, SeedSize> = {
  '14k': {
    name: '14k', slug: '14k', agents: 10_000, utm: 2_000, lte: 2_000, inventoryEndpoints: 200, inventoryItems: 200, sensors: 200,
    orgs: { resellers: 10, customersPerReseller: 10, sitesPerCustomer: 6, mspCustomers: 5, mspSitesPerCustomer: 5, mspLocationsPerSite: 1 },
  },
  '140k': {
    name: '140k', slug: '140k', agents: 100_000, utm: 20_000, lte: 20_000, inventoryEndpoints: 2_000, inventoryItems: 200, sensors: 2_000,
    orgs: { resellers: 20, customersPerReseller: 50, sitesPerCustomer: 6, mspCustomers: 10, mspSitesPerCustomer: 10, mspLocationsPerSite: 2 },
  },
  '1.4m': {
    name: '1.4m', slug: '1m4', agents: 1_000_000, utm: 200_000, lte: 200_000, inventoryEndpoints: 2_000, inventoryItems: 200, sensors: 2_000,
    orgs: { resellers: 20, customersPerReseller: 50, sitesPerCustomer: 69, mspCustomers: 10, mspSitesPerCustomer: 10, mspLocationsPerSite: 29 },
  },
};
export const FULL: SeedSize = SIZES['140k'];
export const QUICK: SeedSize = SIZES['14k'];

/** The size named on the command line (`1.4M` and `1.4m` alike). */
export function sizeNamed(name: string): SeedSize {
  const s = SIZES[name.toLowerCase() as SizeName];
  if (!s) throw new Error(`--size: one of ${Object.keys(SIZES).join(', ')}, not ${name}`);
  return s;
}

/** The distributor: the root whose subtree holds about 70 % of the organizations and endpoints. */
export const DISTRIBUTOR = 'dist';

export interface Seeded {
  roots: string[];
  orgs: string[];
  /** Each organization's parent (absent for a root), in the order of `orgs` (parents first). */
  parents: Map<string, string>;
  agentIds: string[];
  utmIds: string[];
  inventoryIds: string[];
  /** Network sensors (agents) with the one host each reports in its heartbeats (known to the service). */
  sensors: { endpointId: string; orgId: string; hostAddress: string }[];
}

/** A placement spread over every organization (7919 is prime: every organization is hit alike). */
function place(orgs: string[], i: number, salt: number): string {
  return orgs[(i * 7919 + salt) % orgs.length];
}

/** The organization of agent `i` (the seed's placement rule, also used by the scenarios). */
export function agentOrg(orgs: string[], i: number): string {
  return place(orgs, i, 0);
}

/** The organization tree of a size: ten MSPs (`msp-0`…) and the distributor, four levels each. */
function orgTree(shape: OrgShape): { roots: string[]; orgs: string[]; parents: Map<string, string> } {
  const roots: string[] = [];
  const orgs: string[] = [];
  const parents = new Map<string, string>();
  const add = (id: string, parent?: string): string => {
    orgs.push(id);
    if (parent) parents.set(id, parent);
    else roots.push(id);
    return id;
  };
  for (let m = 0; m < 10; m++) {
    const msp = add(`msp-${m}`);
    for (let c = 0; c < shape.mspCustomers; c++) {
      const cust = add(`${msp}-c${c}`, msp);
      for (let s = 0; s < shape.mspSitesPerCustomer; s++) {
        const site = add(`${cust}-s${s}`, cust);
        for (let l = 0; l < shape.mspLocationsPerSite; l++) add(`${site}-l${l}`, site);
      }
    }
  }
  const dist = add(DISTRIBUTOR);
  for (let r = 0; r < shape.resellers; r++) {
    const reseller = add(`${dist}-r${r}`, dist);
    for (let c = 0; c < shape.customersPerReseller; c++) {
      const cust = add(`${reseller}-c${c}`, reseller);
      for (let s = 0; s < shape.sitesPerCustomer; s++) add(`${cust}-s${s}`, cust);
    }
  }
  return { roots, orgs, parents };
}

/** The ids a seed of `size` creates: deterministic, so `--reuse` can skip seeding. */
export function seededIds(size: SeedSize): Seeded {
  const { roots, orgs, parents } = orgTree(size.orgs);
  const agentIds = Array.from({ length: size.agents }, (_, i) => `agent-${i}`);
  const utmIds = Array.from({ length: size.utm }, (_, i) => `utm-${i}`);
  const inventoryIds = agentIds.slice(0, size.inventoryEndpoints);
  const sensors = agentIds.slice(0, size.sensors).map((endpointId, j) => ({
    endpointId,
    orgId: agentOrg(orgs, j),
    hostAddress: `10.1.${(j >> 8) & 255}.${j & 255}`,
  }));
  return { roots, orgs, parents, agentIds, utmIds, inventoryIds, sensors };
}

const SYSTEM = new Access({ role: 'system', name: 'bench-seed' }, { exists: async () => true, isWithin: async () => true, subtreeQuery: async (o, f) => ({ term: { [f.replace(/orgId$/, 'orgPath')]: o } }) });
const MODELS = ['MX64', 'MX67', 'MX68', 'MX75', 'MX84', 'MX85', 'MX95', 'MX105', 'MX250', 'Z3', 'Z4', 'FG-60F', 'FG-100F', 'SRX300'];
const WORDS = ['front', 'desk', 'lab', 'server', 'kiosk', 'office', 'finance', 'dev', 'build', 'hr', 'sales', 'warehouse'];
const OSES = [
  { os: 'windows', platform: 'Microsoft Windows 11 Pro', platformFamily: 'Standalone Workstation' },
  { os: 'linux', platform: 'ubuntu', platformFamily: 'debian' },
  { os: 'darwin', platform: 'darwin', platformFamily: 'Standalone Workstation' },
];

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length];
}

function baseDoc(id: string, orgId: string, i: number, now: string): EndpointDoc {
  const by = { username: 'bench-seed', authenticator: 'none' };
  return { id, orgId, type: 'VC_ENDPOINT', createdAt: now, updatedAt: now, createdBy: by, updatedBy: by, deleted: false, connectionStatus: i % 3 === 0 ? 'CONNECTED' : 'DISCONNECTED' };
}

const CATALOGUE = Array.from({ length: 1000 }, (_, k) => ({ name: `package-${k}`, vendor: `vendor-${k % 40}` }));

/** The software inventory seeded for inventory endpoint `n` (distinct names). */
export function seededInventory(n: number, count: number): { name: string; vendor: string; version: string }[] {
  return Array.from({ length: count }, (_, k) => {
    const c = CATALOGUE[(n * 17 + k * 5) % CATALOGUE.length];
    return { name: c.name, vendor: c.vendor, version: `${1 + (k % 3)}.${n % 4}.0` };
  });
}

/**
 * The report of inventory endpoint `n` on its visit `visit` in which every entry differs from the
 * visit before: the seeded names, each at a version naming the visit (≈200 index + ≈200 delete).
 */
export function inventoryReport(n: number, visit: number): InstalledSoftware[] {
  return seededInventory(n, 200).map((it, k) => ({ name: it.name, vendor: it.vendor, version: `${10 + visit}.${k % 3}.0` }));
}

/**
 * The seeded inventory of endpoint `n` on its visit `visit`: a window of 10 items, which moves with
 * the visit, at a version naming it. Against the visit before, the previous window returns to its
 * seeded versions and the new one moves (≈20 index + ≈20 delete).
 */
export function typicalReport(n: number, visit: number): InstalledSoftware[] {
  const items = seededInventory(n, 200);
  const from = (visit * 10) % items.length;
  return items.map((it, k) => (k >= from && k < from + 10 ? { ...it, version: `9.${visit}.0` } : it));
}

/**
 * The ancestry the service stamps on a record of `orgId` (src/store/org-path.ts), from its own
 * organization tree holding the seeded organizations: the direct writes carry it as the service's
 * do, so the service never takes them for records of an older release and stamps them in the
 * background while it is measured.
 */
export function ancestryOf(seeded: Pick<Seeded, 'orgs' | 'parents'>): (orgId: string) => string[] {
  // The service's own tree, loaded with the seeded organizations.
  const tree = new OrgLinks();
  for (const org of seeded.orgs) tree.link(org, seeded.parents.get(org));
  const known = new Map<string, string[]>();
  return (orgId) => {
    let path = known.get(orgId);
    if (!path) known.set(orgId, (path = tree.pathOf(orgId)));
    return path;
  };
}

/** UTM record `i` of a data set (also the source records of the migration benchmark). */
export function utmDoc(i: number, orgs: string[], now: string): EndpointDoc {
  const id = `utm-${i}`;
  return {
    ...baseDoc(id, place(orgs, i, 11), i, now),
    type: i % 4 === 0 ? 'VC_UTM' : 'EXTERNAL_UTM',
    serialId: `Q2XX-${i}`,
    siteId: `site-${i % 997}`,
    model: MODELS[(i * i) % MODELS.length],
    lastMacAddress: `00:18:0a:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
    externalStatus: 'ACTIVE',
    wanStatus: i % 5 === 0 ? 'WAN2' : 'WAN1',
    site: { id: `site-${i % 997}`, orgName: `Customer ${i % 50}`, displayName: `Site ${i % 997}` },
  };
}

export async function bulkDocs(ctx: StoreContext, docs: EndpointDoc[]): Promise<void> {
  const res = await bulkEndpoints(
    ctx,
    docs.flatMap((d) => [{ index: { _id: d.id } }, d]),
    { refresh: false },
  );
  if (res.errors) throw new Error(`seed bulk failed: ${JSON.stringify(res.items.find((i) => i.index?.error))}`);
}

export async function seed(s: Services, ctx: StoreContext, size: SeedSize, log: (l: string) => void): Promise<Seeded> {
  const now = new Date().toISOString();
  const ids = seededIds(size);
  const { orgs } = ids;
  // Organizations by bulk through the organizations store (each with its ancestors, parents
  // first), then the service's tree reloaded once: the endpoints' bulks stamp their ancestry from it.
  const ancestors = new Map<string, string[]>();
  const orgDoc = (id: string): OrganizationDoc => {
    const parentId = ids.parents.get(id);
    const up = parentId ? [...(ancestors.get(parentId) ?? []), parentId] : [];
    ancestors.set(id, up);
    return { id, name: `Org ${id}`, ...(parentId ? { parentId } : {}), ancestors: up, createdAt: now, createdBy: { username: 'bench-seed', authenticator: 'none' } };
  };
  const orgIndex = new DocStore<OrganizationDoc>(ctx, 'organizations', 'organization');
  for (let i = 0; i < orgs.length; i += 5000) {
    const res = await orgIndex.bulk(orgs.slice(i, i + 5000).flatMap((id) => [{ create: { _id: id } }, orgDoc(id)]), { refresh: false });
    if (res.errors) throw new Error('seeding organizations failed');
  }
  await orgIndex.refresh();
  await s.orgs.reload();
  log(`organizations: ${orgs.length}`);

  const chunk = 5000;
  // Two bulks in flight: Elasticsearch indexes one while the next is built and sent.
  const inFlight = new Set<Promise<void>>();
  const send = async (docs: EndpointDoc[]): Promise<void> => {
    const p = bulkDocs(ctx, docs).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= 2) await Promise.race(inFlight);
  };
  for (let start = 0; start < size.agents; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.agents, start + chunk); i++) {
      const id = `agent-${i}`;
      const os = pick(OSES, i);
      docs.push({
        ...baseDoc(id, agentOrg(orgs, i), i, now),
        displayName: `${pick(WORDS, i)}-${pick(WORDS, i >> 3)} ${i}`,
        clientVersion: `v3.${8 + (i % 3)}.${i % 5}`,
        lastIp: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        internalIps: [`192.168.${(i >> 8) & 255}.${i & 255}`],
        lastConnect: new Date(Date.now() - (i % 60) * 86_400_000).toISOString(),
        hostInfo: { hostName: `host-${i}`, ...os, kernelArch: 'x86_64', uptime: i, procs: 100 + (i % 200) },
      });
    }
    await send(docs);
  }
  log(`agents: ${size.agents}`);

  for (let start = 0; start < size.utm; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.utm, start + chunk); i++) docs.push(utmDoc(i, orgs, now));
    await send(docs);
  }
  for (let start = 0; start < size.lte; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.lte, start + chunk); i++) {
      docs.push({
        ...baseDoc(`lte-${i}`, place(orgs, i, 13), i, now),
        type: 'VC_LTE',
        imei: `35${String(i).padStart(13, '0')}`,
        iccid: `8901${String(i).padStart(15, '0')}`,
        dataUsage: (i % 1000) * 1.5,
        dataAllowance: 10_000,
        telco: pick(['telco-a', 'telco-b'], i),
        model: pick(['LTE-1', 'LTE-2'], i),
        site: { id: `site-${i % 997}` },
      });
    }
    await send(docs);
  }
  await Promise.all(inFlight);
  log(`utm: ${size.utm}, lte: ${size.lte}`);

  const { inventoryIds } = ids;
  const concurrency = 8;
  for (let start = 0; start < inventoryIds.length; start += concurrency) {
    await Promise.all(
      inventoryIds.slice(start, start + concurrency).map(async (id, j) => {
        const n = start + j;
        const items = seededInventory(n, size.inventoryItems);
        await s.softwareInventory.replaceInventory({ id, orgId: agentOrg(orgs, n) }, items, { refresh: false });
      }),
    );
  }
  log(`software inventory: ${inventoryIds.length} endpoints × ${size.inventoryItems} items`);

  // Each network sensor's host is known before the heartbeat scenario (its first sighting is a create).
  for (let start = 0; start < ids.sensors.length; start += concurrency) {
    await Promise.all(
      ids.sensors.slice(start, start + concurrency).map((sn) =>
        s.network.recordHeartbeat({ ...sn, externalAddress: '198.51.100.7', operatingSystem: 'linux' }, SYSTEM),
      ),
    );
  }
  log(`network sensors: ${ids.sensors.length}`);
  await refreshIndex(ctx, 'endpoints');
  return ids;
}

export function randomId(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(6).toString('hex')}`;
}
