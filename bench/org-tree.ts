/**
 * The organization tree at scale, on an Elasticsearch node of its own: memory per instance, reload
 * time, organization create and move latency, and the subtree lookups, with N organizations
 * (default 100,000) in four levels: one distributor, 20 resellers, 100 customers each, sites below.
 *
 *   node --expose-gc --import tsx bench/org-tree.ts [--orgs 100000] [--label text]
 *
 * Writes bench/results/<time>-org-tree.json. The figures of one instance: the service's own tree
 * (src/resources/organizations/service.ts) loaded from the store through its own code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createClient, type StoreContext } from '../src/store/client.js';
import { ensureIndices } from '../src/store/index-setup.js';
import { DocStore } from '../src/store/doc-store.js';
import { createServices } from '../src/container.js';
import { Access } from '../src/access/access.js';
import { startLocalNode } from '../src/dev/local-elasticsearch.js';
import type { OrganizationDoc } from '../src/resources/organizations/store.js';

const { values } = parseArgs({ options: { orgs: { type: 'string', default: '100000' }, label: { type: 'string', default: '' } } });
const ORGS = Number(values.orgs);
const RESELLERS = 20;
const CUSTOMERS_PER_RESELLER = 100;
const SITES_PER_CUSTOMER = Math.max(1, Math.ceil((ORGS - 1 - RESELLERS - RESELLERS * CUSTOMERS_PER_RESELLER) / (RESELLERS * CUSTOMERS_PER_RESELLER)));
const PREFIX = 'ecs-orgbench';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
}

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const log = (s: string): void => void process.stderr.write(`${new Date().toISOString()} ${s}\n`);

async function main(): Promise<void> {
  const node = await startLocalNode({ name: 'orgbench', port: 0, heap: '768m', log });
  const config = loadConfig({ ELASTICSEARCH_URL: node.url, ECS_INDEX_PREFIX: PREFIX, ECS_DEVELOPMENT: 'true' });
  const store: StoreContext = { client: createClient(node.url, 120_000), prefix: PREFIX, refresh: 'shared' };
  const logger = createLogger('warn');
  try {
    await store.client.indices.delete({ index: `${PREFIX}-*`, expand_wildcards: 'all', allow_no_indices: true });
    await ensureIndices(store, logger);

    const now = new Date().toISOString();
    const by = { username: 'bench', authenticator: 'none' };
    const doc = (id: string, ancestors: string[]): OrganizationDoc => ({
      id,
      name: `Org ${id}`,
      ...(ancestors.length ? { parentId: ancestors[ancestors.length - 1] } : {}),
      ancestors,
      createdAt: now,
      createdBy: by,
    });
    const docs: OrganizationDoc[] = [doc('dist', [])];
    for (let r = 0; r < RESELLERS && docs.length < ORGS; r++) {
      const rs = `dist-r${r}`;
      docs.push(doc(rs, ['dist']));
      for (let c = 0; c < CUSTOMERS_PER_RESELLER && docs.length < ORGS; c++) {
        const cu = `${rs}-c${c}`;
        docs.push(doc(cu, ['dist', rs]));
        for (let s = 0; s < SITES_PER_CUSTOMER && docs.length < ORGS; s++) docs.push(doc(`${cu}-s${s}`, ['dist', rs, cu]));
      }
    }
    const seedStart = performance.now();
    const orgIndex = new DocStore<OrganizationDoc>(store, 'organizations', 'organization');
    for (let i = 0; i < docs.length; i += 5000) {
      const res = await orgIndex.bulk(docs.slice(i, i + 5000).flatMap((d) => [{ create: { _id: d.id } }, d]), { refresh: false });
      if (res.errors) throw new Error('seeding organizations failed');
    }
    await orgIndex.refresh();
    const seedMs = performance.now() - seedStart;
    log(`seeded ${docs.length} organizations in ${Math.round(seedMs)} ms`);

    const heapBefore = heap();
    const services = createServices({ config, store, log: logger });
    const orgs = services.orgs;
    const reloads: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      await orgs.reload();
      reloads.push(performance.now() - t0);
    }
    const heapAfter = heap();
    const treeBytes = heapAfter - heapBefore;
    log(`tree: ${Math.round(treeBytes / 1e6)} MB heap, reload p50 ${pct(reloads.slice(1), 50)} ms`);

    const system = new Access({ role: 'system', name: 'bench' }, orgs);
    const creates: number[] = [];
    for (let i = 0; i < 100; i++) {
      const parent = `dist-r${i % RESELLERS}-c${i % CUSTOMERS_PER_RESELLER}`;
      const t0 = performance.now();
      await orgs.create({ id: `new-${i}`, name: `New ${i}`, parentId: parent }, system);
      creates.push(performance.now() - t0);
    }
    log(`create p50 ${pct(creates, 50)} ms`);

    const moves: number[] = [];
    const movesDone: number[] = [];
    for (let i = 0; i < 6; i++) {
      const customer = `dist-r0-c${i}`;
      const t0 = performance.now();
      await orgs.update(customer, { parentId: `dist-r${1 + (i % (RESELLERS - 1))}` });
      moves.push(performance.now() - t0);
      for (;;) {
        const s = await orgs.moveStatus(customer);
        if (s.state === 'DONE') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      movesDone.push(performance.now() - t0);
    }
    log(`move p50 ${pct(moves, 50)} ms, done p50 ${pct(movesDone, 50)} ms`);

    const lookups = (fn: () => Promise<unknown>, n: number) => async (): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn();
      return (performance.now() - t0) / n;
    };
    const site = `dist-r5-c50-s${SITES_PER_CUSTOMER - 1}`;
    const isWithinUs = (await lookups(() => orgs.isWithin(site, 'dist'), 100_000)()) * 1000;
    const pathOfUs = (await lookups(() => orgs.pathOf(site), 100_000)()) * 1000;
    const subtreeQueryUs = (await lookups(() => orgs.subtreeQuery('dist', 'orgId'), 100_000)()) * 1000;
    const t0 = performance.now();
    const all = await orgs.subtree('dist');
    const subtreeListMs = performance.now() - t0;

    const result = {
      at: new Date().toISOString(),
      label: values.label,
      machine: '2 cores shared with other work; a node of its own (768 MB heap)',
      organizations: docs.length,
      levels: 4,
      seedMs: Math.round(seedMs),
      tree: { heapBytes: treeBytes, bytesPerOrganization: Math.round(treeBytes / docs.length), rssBytes: process.memoryUsage().rss },
      reloadMs: { p50: pct(reloads.slice(1), 50), max: pct(reloads.slice(1), 100), runs: reloads.map((x) => Math.round(x)) },
      createMs: { p50: pct(creates, 50), p99: pct(creates, 99), n: creates.length },
      moveMs: { p50: pct(moves, 50), max: pct(moves, 100), n: moves.length, organizationsMoved: SITES_PER_CUSTOMER + 1 },
      moveDoneMs: { p50: pct(movesDone, 50), max: pct(movesDone, 100) },
      lookupsUs: { isWithin: Math.round(isWithinUs * 100) / 100, pathOf: Math.round(pathOfUs * 100) / 100, subtreeQuery: Math.round(subtreeQueryUs * 100) / 100 },
      subtreeListOfRootMs: { ms: Math.round(subtreeListMs), organizations: all.length },
    };
    const file = path.join('bench', 'results', `${result.at.replace(/[:.]/g, '-').slice(0, 19)}-org-tree${values.label ? `-${values.label}` : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\nwritten ${file}\n`);
    await orgs.moveTask?.stop();
  } finally {
    await store.client.indices.delete({ index: `${PREFIX}-*`, expand_wildcards: 'all', allow_no_indices: true }).catch(() => undefined);
    await store.client.close();
    if (node.started) await node.stop();
  }
}

await main();
