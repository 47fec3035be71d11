/**
 * `npm run bench -- org-create`: onboarding customers by script (docs/adr/0065).
 *
 * - one instance: 10,000 organization creates (`--quick`: 2,000) by 32 concurrent callers
 *   under one distributor, fresh ids: answers by status, creates/s, p50/p99, and the CPU per
 *   create of the service and of Elasticsearch;
 * - two instances on the same indices: 4,000 creates (`--quick`: 1,000) by 32 callers, each
 *   create through either instance in turn, while both instances' `/metrics` are read every
 *   500 ms for the largest delay between a change's writing and its application on the other
 *   (`ecs_change_feed_delay_max_seconds`); at the end both trees must hold every organization.
 *
 * No data set is seeded: the run starts from empty indices under its own prefix.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { Client } from '@elastic/elasticsearch';
import { percentile } from './direct.js';
import { cpuSeconds, sample } from './proc.js';
import { API } from './scenario.js';
import { startService, type Runtime } from './service-process.js';
import type { TargetResult } from './report.js';

export interface OrgCreateRound {
  instances: number;
  creates: number;
  callers: number;
  /** Answers by status code ("201": …). */
  statuses: Record<string, number>;
  seconds: number;
  createsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU (ms) per create of the service(s) and of the Elasticsearch node. */
  serviceCpuMsPerCreate: number;
  esCpuMsPerCreate?: number;
  /** Largest feed delay either instance reported over the round (two instances only), ms. */
  feedDelayMaxMs?: number;
  /** Organizations below the distributor that each instance's tree knew at the end. */
  treeCounts?: number[];
  /** How long after the last answer both trees held every organization (ms; absent: not within 10 s). */
  treesCompleteMs?: number;
  firstError?: string;
}

export interface OrgCreateResult {
  single: OrgCreateRound;
  pair: OrgCreateRound;
  loadAverage: number[];
}

export interface OrgCreateOptions {
  client: Client;
  esUrl: string;
  esPid?: number;
  prefix: string;
  runtime: Runtime;
  quick: boolean;
  log: (line: string) => void;
}

const CALLERS = 32;
const TOKEN = `bench-${crypto.randomBytes(12).toString('hex')}`;
const headers = { 'x-auth-token': TOKEN, 'content-type': 'application/json' };

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${API}/admin/organizations`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

async function feedDelayMs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^ecs_change_feed_delay_max_seconds (\S+)$/m.exec(text)?.[1] ?? 0) * 1000;
}

async function readerToken(url: string, root: string): Promise<string> {
  const minted = await fetch(`${url}${API}/admin/tokens`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-tree', role: 'reader', orgId: root }) });
  return ((await minted.json()) as { token: string }).token;
}

/** Organizations below the token's organization in the instance's tree (a reader's /org/tree lists its subtree from the tree). */
async function treeCount(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}${API}/org/tree`, { headers: { 'x-auth-token': token } });
  const body = (await res.json()) as { organizations: unknown[] };
  return body.organizations.length - 1;
}

async function round(o: OrgCreateOptions, urls: string[], pids: number[], creates: number): Promise<OrgCreateRound> {
  const distributor = `dist-${crypto.randomBytes(4).toString('hex')}`;
  const made = await post(urls[0] as string, { id: distributor, name: 'Bench distributor' });
  if (made.status !== 201) throw new Error(`distributor: ${made.status} ${made.text}`);
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let firstError: string | undefined;
  let delayMax = 0;
  let watching = urls.length > 1;
  const watcher = (async () => {
    while (watching) {
      for (const u of urls) delayMax = Math.max(delayMax, await feedDelayMs(u));
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const svc0 = pids.map((p) => sample(p).cpuSeconds);
  const es0 = cpuSeconds(o.esPid);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (let i = next++; i < creates; i = next++) {
        const s = performance.now();
        const res = await post(urls[i % urls.length] as string, { id: `${distributor}-c${i}`, name: `Customer ${i}`, parentId: distributor });
        latencies.push(performance.now() - s);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status !== 201 && firstError === undefined) firstError = `${res.status} ${res.text.slice(0, 300)}`;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const es1 = cpuSeconds(o.esPid);
  const svcCpu = pids.reduce((sum, p, k) => sum + sample(p).cpuSeconds - (svc0[k] as number), 0);
  watching = false;
  await watcher;
  if (urls.length > 1) for (const u of urls) delayMax = Math.max(delayMax, await feedDelayMs(u));
  latencies.sort((a, b) => a - b);
  const ok = statuses['201'] ?? 0;
  // Both trees must end complete; how long after the last answer they got there is reported.
  let treeCounts: number[] | undefined;
  let treesCompleteMs: number | undefined;
  if (urls.length > 1) {
    const t1 = performance.now();
    const tokens = await Promise.all(urls.map((u) => readerToken(u, distributor)));
    for (;;) {
      treeCounts = await Promise.all(urls.map((u, k) => treeCount(u, tokens[k] as string)));
      if (treeCounts.every((n) => n === ok)) {
        treesCompleteMs = Math.round(performance.now() - t1);
        break;
      }
      if (performance.now() - t1 > 10_000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    instances: urls.length,
    creates,
    callers: CALLERS,
    statuses,
    seconds: Math.round(seconds * 10) / 10,
    createsPerSecond: Math.round(ok / seconds),
    p50: Math.round(percentile(latencies, 50) * 10) / 10,
    p99: Math.round(percentile(latencies, 99) * 10) / 10,
    max: Math.round((latencies[latencies.length - 1] ?? 0) * 10) / 10,
    serviceCpuMsPerCreate: Math.round((svcCpu * 1000 * 100) / creates) / 100,
    ...(es0 !== undefined && es1 !== undefined ? { esCpuMsPerCreate: Math.round(((es1 - es0) * 1000 * 100) / creates) / 100 } : {}),
    ...(urls.length > 1 ? { feedDelayMaxMs: Math.round(delayMax), treeCounts, treesCompleteMs } : {}),
    ...(firstError ? { firstError } : {}),
  };
}

export async function orgCreateBench(o: OrgCreateOptions): Promise<OrgCreateResult> {
  const existing = await o.client.indices.get({ index: `${o.prefix}-*`, allow_no_indices: true, ignore_unavailable: true });
  for (const name of Object.keys(existing)) await o.client.indices.delete({ index: name });
  const env = { ELASTICSEARCH_URL: o.esUrl, ECS_INDEX_PREFIX: o.prefix, ECS_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' };
  const a = await startService({ runtime: o.runtime, env });
  try {
    await waitReady(a.url);
    o.log(`org-create: one instance at ${a.url}`);
    // A short warm-up (JIT, connections), under its own distributor.
    await round(o, [a.url], [a.pid], 320);
    const single = await round(o, [a.url], [a.pid], o.quick ? 2000 : 10_000);
    o.log(`org-create one instance: ${JSON.stringify(single)}`);
    const b = await startService({ runtime: o.runtime, env });
    try {
      await waitReady(b.url);
      const pair = await round(o, [a.url, b.url], [a.pid, b.pid], o.quick ? 1000 : 4000);
      o.log(`org-create two instances: ${JSON.stringify(pair)}`);
      return { single, pair, loadAverage: os.loadavg() };
    } finally {
      await b.stop();
    }
  } finally {
    await a.stop();
  }
}

export interface OrgCreateInTree {
  /** Organizations in the tree before the creates. */
  organizations: number;
  creates: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Organization creates into a seeded data set's full tree, on the bench's running service: one
 * caller, one create after the other (the latency of a create, no queueing), fresh ids below
 * `parent`. Each run adds `creates` organizations to the data set.
 */
export async function orgCreateInTree(o: {
  serviceUrl: string;
  token: string;
  parent: string;
  creates: number;
  organizations: number;
  log: (l: string) => void;
}): Promise<OrgCreateInTree> {
  const h = { 'x-auth-token': o.token, 'content-type': 'application/json' };
  const { organizations } = o;
  const run = crypto.randomBytes(3).toString('hex');
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  for (let i = 0; i < o.creates + 20; i++) {
    const t0 = performance.now();
    const res = await fetch(`${o.serviceUrl}${API}/admin/organizations`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ id: `${o.parent}-new-${run}-${i}`, name: `New ${i}`, parentId: o.parent }),
    });
    await res.arrayBuffer();
    // The first 20 warm up (JIT, connections) and are not counted.
    if (i >= 20) {
      latencies.push(performance.now() - t0);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  }
  latencies.sort((a, b) => a - b);
  const r = (n: number): number => Math.round(n * 10) / 10;
  const out = { organizations, creates: o.creates, statuses, p50: r(percentile(latencies, 50)), p99: r(percentile(latencies, 99)), max: r(latencies[latencies.length - 1] ?? 0) };
  o.log(`org-create into the seeded tree: ${JSON.stringify(out)}`);
  return out;
}

async function waitReady(url: string): Promise<void> {
  for (let k = 0; k < 600; k++) {
    const res = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready in 60 s`);
}

const row = (name: string, r: OrgCreateRound): string =>
  `| ${name} | ${r.creates} | ${Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')} | ${r.createsPerSecond} | ${r.p50} / ${r.p99} | ${r.serviceCpuMsPerCreate} | ${r.esCpuMsPerCreate ?? '-'} | ${r.feedDelayMaxMs ?? '-'} | ${r.treeCounts?.join(' / ') ?? '-'}${r.treesCompleteMs !== undefined ? ` (${r.treesCompleteMs} ms after)` : ''} |`;

/** The markdown table of an org-create run. */
export function orgCreateTable(r: OrgCreateResult): string {
  return [
    '| org-create (32 callers, one distributor) | creates | answers | creates/s | p50 / p99 ms | service CPU ms/create | ES CPU ms/create | feed delay max ms | trees (A / B) |',
    '|---|---|---|---|---|---|---|---|---|',
    row('one instance', r.single),
    row('two instances, alternating', r.pair),
  ].join('\n');
}

/** The scenario's targets. */
export function orgCreateTargets(r: OrgCreateResult): TargetResult[] {
  const refused = (x: OrgCreateRound): number => x.creates - (x.statuses['201'] ?? 0);
  return [
    { target: 'org-create: 0 refused (one instance)', measured: String(refused(r.single)), met: refused(r.single) === 0 },
    { target: 'org-create: p50 ≤ 30 ms', measured: `${r.single.p50} ms`, met: r.single.p50 <= 30 },
    { target: 'org-create: ≥ 500 creates/s', measured: `${r.single.createsPerSecond}/s`, met: r.single.createsPerSecond >= 500 },
    { target: 'org-create: 0 refused (two instances)', measured: String(refused(r.pair)), met: refused(r.pair) === 0 },
    {
      target: 'org-create: each instance sees the other’s organizations within 1 s',
      measured: `${r.pair.feedDelayMaxMs ?? '?'} ms; trees ${r.pair.treeCounts?.join(' / ') ?? '?'} of ${r.pair.creates}`,
      met: (r.pair.feedDelayMaxMs ?? Infinity) <= 1000 && (r.pair.treeCounts ?? []).every((n) => n === r.pair.creates),
    },
  ];
}
