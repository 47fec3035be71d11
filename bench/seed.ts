/**
 * Seeds a realistic data set through the service's own code (services and stores, bulk, not
 * one request per record): organizations in three levels, agents, UTM and LTE endpoints,
 * software inventory.
 */
import crypto from 'node:crypto';
import type { Services } from '../src/resources/index.js';
import type { StoreContext } from '../src/store/client.js';
import { bulkEndpoints, refreshIndex } from '../test/helpers/endpoint-store.js';
import type { EndpointDoc } from '../src/resources/endpoints/model.js';
import { Access } from '../src/http/auth.js';

export interface SeedSize {
  agents: number;
  utm: number;
  lte: number;
  inventoryEndpoints: number;
  inventoryItems: number;
}

export const FULL: SeedSize = { agents: 100_000, utm: 20_000, lte: 20_000, inventoryEndpoints: 2_000, inventoryItems: 200 };
export const QUICK: SeedSize = { agents: 10_000, utm: 2_000, lte: 2_000, inventoryEndpoints: 200, inventoryItems: 200 };

export interface Seeded {
  roots: string[];
  orgs: string[];
  agentIds: string[];
  utmIds: string[];
  inventoryIds: string[];
  /** Network sensors (agents) with the one host each reports in its heartbeats (known to the service). */
  sensors: { endpointId: string; orgId: string; hostAddress: string }[];
}

/** The organization of agent `i` (the seed's placement rule, also used by the scenarios). */
export function agentOrg(orgs: string[], i: number): string {
  return pick(orgs, i * 7);
}

/** The ids a seed of `size` creates: deterministic, so `--reuse` can skip seeding. */
export function seededIds(size: SeedSize): Seeded {
  const roots: string[] = [];
  const orgs: string[] = [];
  for (let r = 0; r < 10; r++) {
    roots.push(`msp-${r}`);
    orgs.push(`msp-${r}`);
    for (let c = 0; c < 5; c++) {
      orgs.push(`msp-${r}-c${c}`);
      for (let l = 0; l < 5; l++) orgs.push(`msp-${r}-c${c}-s${l}`);
    }
  }
  const agentIds = Array.from({ length: size.agents }, (_, i) => `agent-${i}`);
  const utmIds = Array.from({ length: size.utm }, (_, i) => `utm-${i}`);
  const inventoryIds = agentIds.slice(0, size.inventoryEndpoints);
  const sensors = agentIds.slice(0, size.inventoryEndpoints).map((endpointId, j) => ({
    endpointId,
    orgId: agentOrg(orgs, j),
    hostAddress: `10.1.${(j >> 8) & 255}.${j & 255}`,
  }));
  return { roots, orgs, agentIds, utmIds, inventoryIds, sensors };
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

/** UTM record `i` of a data set (also the source records of the migration benchmark). */
export function utmDoc(i: number, orgs: string[], now: string): EndpointDoc {
  const id = `utm-${i}`;
  return {
    ...baseDoc(id, pick(orgs, i * 11), i, now),
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
  const roots: string[] = [];
  const orgs: string[] = [];
  // 10 MSPs × 5 customers × 5 sites ≈ 300 organizations in three levels.
  for (let r = 0; r < 10; r++) {
    const root = (await s.orgs.create({ id: `msp-${r}`, name: `MSP ${r}` }, SYSTEM)).id;
    roots.push(root);
    orgs.push(root);
    for (let c = 0; c < 5; c++) {
      const cust = (await s.orgs.create({ id: `${root}-c${c}`, name: `Customer ${r}.${c}`, parentId: root }, SYSTEM)).id;
      orgs.push(cust);
      for (let l = 0; l < 5; l++) {
        orgs.push((await s.orgs.create({ id: `${cust}-s${l}`, name: `Site ${r}.${c}.${l}`, parentId: cust }, SYSTEM)).id);
      }
    }
  }
  log(`organizations: ${orgs.length}`);

  const agentIds: string[] = [];
  const chunk = 5000;
  for (let start = 0; start < size.agents; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.agents, start + chunk); i++) {
      const id = `agent-${i}`;
      agentIds.push(id);
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
    await bulkDocs(ctx, docs);
  }
  log(`agents: ${agentIds.length}`);

  const utmIds: string[] = [];
  for (let start = 0; start < size.utm; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.utm, start + chunk); i++) {
      utmIds.push(`utm-${i}`);
      docs.push(utmDoc(i, orgs, now));
    }
    await bulkDocs(ctx, docs);
  }
  for (let start = 0; start < size.lte; start += chunk) {
    const docs: EndpointDoc[] = [];
    for (let i = start; i < Math.min(size.lte, start + chunk); i++) {
      docs.push({
        ...baseDoc(`lte-${i}`, pick(orgs, i * 13), i, now),
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
    await bulkDocs(ctx, docs);
  }
  log(`utm: ${size.utm}, lte: ${size.lte}`);

  const inventoryIds = agentIds.slice(0, size.inventoryEndpoints);
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
  const ids = seededIds(size);
  for (let start = 0; start < ids.sensors.length; start += concurrency) {
    await Promise.all(
      ids.sensors.slice(start, start + concurrency).map((sn) =>
        s.network.recordHeartbeat({ ...sn, externalAddress: '198.51.100.7', operatingSystem: 'linux' }, SYSTEM),
      ),
    );
  }
  log(`network sensors: ${ids.sensors.length}`);
  await refreshIndex(ctx, 'endpoints');
  if (ids.orgs.join() !== orgs.join() || ids.agentIds.length !== agentIds.length || ids.utmIds.length !== utmIds.length) {
    throw new Error('seededIds() disagrees with seed()');
  }
  return ids;
}

export function randomId(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(6).toString('hex')}`;
}
