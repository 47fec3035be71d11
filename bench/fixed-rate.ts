/**
 * The service's own CPU a request at a fixed rate, this build against an earlier one, alternated.
 *
 * The curve's closed-loop rounds run the machine at its limit, where the service, Elasticsearch
 * and the load generator share two cores: a service that spends less CPU a request lets the store
 * have more, and the gain shows as throughput only when the store was the one waiting. At a fixed
 * rate below the limit, the CPU each process spends a request is read directly. Each build is
 * started alone (never side by side), warmed at 64 callers for 12 s so that its caches and signs
 * of life settle, then driven at the rate for the window; the order alternates pair by pair.
 *
 *   BENCH_BEFORE_DIR=/path/to/checkout npm run bench:fixed-rate -- --size 140k \
 *     --scenario "software inventory replace (200 items, 10" --rate 250 --pairs 3
 *
 * BENCH_BEFORE_DIR is a checkout of the earlier commit with its dist/ built and node_modules
 * present (a link to this one's will do). Needs a seeded data set of the size on
 * ELASTICSEARCH_URL and a built service. Writes bench/results/<date>-fixed-rate-<size>.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@elastic/elasticsearch';
import { cannon } from './measure.js';
import { cpuSeconds, esNode } from './proc.js';
import { watchQuiet, type Quietness } from './quiet.js';
import type { Scenario } from './scenario.js';
import { scenarios } from './scenarios.js';
import { DISTRIBUTOR, seededIds, sizeNamed } from './seed.js';
import { startService } from './service-process.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '140k' },
    scenario: { type: 'string', default: 'software inventory replace (200 items, 10' },
    rate: { type: 'string', default: '250' },
    seconds: { type: 'string', default: '15' },
    pairs: { type: 'string', default: '3' },
  },
});
const before = process.env.BENCH_BEFORE_DIR;
if (!before || !fs.existsSync(path.join(before, 'dist', 'main.js'))) throw new Error('BENCH_BEFORE_DIR: a checkout with a built dist/ is needed');
const esUrl = process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200';
const size = sizeNamed(values.size);
const prefix = `ecs-bench${size.slug}`;
const admin = 'bench-fixed-rate-admin-token-0123456789';
const rate = Number(values.rate);
const seconds = Number(values.seconds);

const client = new Client({ node: esUrl });
const seeded = seededIds(size);
const list = scenarios({ client, prefix, seeded, root: seeded.roots[0], subtree: [], distributor: DISTRIBUTOR });
const found = list.find((s) => s.name.startsWith(values.scenario) && s.caller !== 'distributor');
if (!found) throw new Error(`--scenario: none of the MSP admin's scenarios starts with "${values.scenario}"`);
const sc: Scenario = found;
const es = await esNode(client);

interface Run {
  build: 'before' | 'this';
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serviceCpuMsPerRequest: number;
  esCpuMsPerRequest?: number;
  /** How alone the window was (bench/quiet.ts): a void run is a direction, not a result. */
  quiet: Pick<Quietness, 'othersCpuPercent' | 'busiest' | 'void'>;
}

/** Until the load average falls under 1: the last run's processes and anything else have settled. */
async function settle(): Promise<void> {
  while (os.loadavg()[0] >= 1) await new Promise((r) => setTimeout(r, 2000));
}

async function measure(build: Run['build']): Promise<Run> {
  await settle();
  const svc = await startService({
    runtime: 'dist',
    env: { ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: prefix, ECS_ADMIN_TOKEN: admin, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' },
    ...(build === 'before' ? { cwd: before } : {}),
  });
  try {
    await cannon(svc.url, 64, { admin }, sc, 12);
    const s0 = cpuSeconds(svc.pid);
    const e0 = cpuSeconds(es.pid);
    const watch = watchQuiet(es.pid);
    const { res } = await cannon(svc.url, 64, { admin }, sc, seconds, rate);
    const { othersCpuPercent, busiest, void: isVoid } = watch.stop();
    const s1 = cpuSeconds(svc.pid);
    const e1 = cpuSeconds(es.pid);
    const n = res.requests.total;
    const perRequest = (a?: number, b?: number): number | undefined => (a === undefined || b === undefined ? undefined : Math.round(((b - a) * 1e6) / n) / 1000);
    return {
      build,
      requests: n,
      rps: res.requests.average,
      p50: res.latency.p50,
      p99: res.latency.p99,
      errors: res.non2xx + res.errors,
      serviceCpuMsPerRequest: perRequest(s0, s1) ?? NaN,
      ...(e0 !== undefined ? { esCpuMsPerRequest: perRequest(e0, e1) } : {}),
      quiet: { othersCpuPercent, busiest, void: isVoid },
    };
  } finally {
    await svc.stop();
  }
}

const runs: Run[] = [];
try {
  await sc.prepare?.();
  for (let p = 0; p < Number(values.pairs); p++) {
    // Alternate which build goes first, so a drift of the machine falls on both alike.
    const order: Run['build'][] = p % 2 === 0 ? ['before', 'this'] : ['this', 'before'];
    for (const build of order) {
      const r = await measure(build);
      runs.push(r);
      console.log(`${build.padEnd(6)} ${r.rps.toFixed(0)} req/s p50 ${r.p50} p99 ${r.p99} ms, service ${r.serviceCpuMsPerRequest} ms a request, Elasticsearch ${r.esCpuMsPerRequest ?? '?'}, others ${r.quiet.othersCpuPercent} %${r.quiet.void ? ' (void)' : ''}`);
    }
  }
} finally {
  await client.close();
}
const file = path.join('bench', 'results', `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-fixed-rate-${size.slug}.json`);
fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), size: size.name, scenario: sc.name, rate, seconds, before, runs }, null, 2)}\n`);
console.log(`wrote ${file}`);
