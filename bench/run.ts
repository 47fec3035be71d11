/**
 * `npm run bench [-- --size 14k|140k|1.4m] [-- --quick] [-- <scenario prefix>… | migration | org-create]`: seeds a realistic data set
 * through the service's own code, starts the service as `npm start` does (built to dist/,
 * plain node) and drives each scenario with autocannon (64 connections, no pipelining,
 * warm-up first), alternating with the same Elasticsearch requests issued directly at the
 * same concurrency (the floor the service stands on). Reports requests/s, p50/p99, service ÷
 * direct, CPU per request of the service and of Elasticsearch, the service's peak RSS, and
 * p99 at 70 % of the service's maximum rate; then the device migration (bench/migration.ts).
 * Writes bench/results/<date>.json and prints markdown tables (results and targets). The
 * scenarios are a registry (bench/registry.ts), each {name, run, table}.
 *
 * Options: --size 14k|140k|1.4m (endpoints; default 140k; bench/seed.ts), --quick (the 14k
 * size with 5-s rounds), --short (5-s rounds at any size), --reuse (keep the data set of an
 * earlier run of the same size: no seeding), --no-direct (no rounds of the direct equivalents), --seed-only (seed, record the time, stop), --profile (the service and the bare hop under --cpu-prof;
 * a summary of each is printed), --tsx (run the service through the tsx loader instead of dist/).
 * ELASTICSEARCH_URL: use that cluster (the bench indices are `ecs-bench<size>-*`); unset, a
 * managed node named `bench` (2 GB heap, its data kept under .local/es-bench/) is started
 * and stopped, or reused when already running.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServices } from '../src/container.js';
import { ensureIndices } from '../src/store/index-setup.js';
import { createClient, type StoreContext } from '../src/store/client.js';
import { startLocalNode } from '../src/dev/local-elasticsearch.js';
import { mintToken, settle } from './measure.js';
import { log, parseOptions } from './options.js';
import { esNode, machine, sample } from './proc.js';
import { formatSummary, summarize } from './profile.js';
import { REGISTRY } from './registry.js';
import { evaluateTargets, targetsTable, type ScenarioResult } from './report.js';
import { scenarios as allScenarios } from './scenarios.js';
import { DISTRIBUTOR, seed, seededIds, type Seeded } from './seed.js';
import { buildService, stampedInBackground, startFlags, startService } from './service-process.js';
import type { Bench, Stage } from './stage.js';
import type { MigrationResult } from './migration.js';

// Held agent channels: a scenario with its own instances, load generators and options, on no seeded data set (bench/agent-channel.ts).
if (process.argv[2] === 'agent-channel') {
  await (await import('./agent-channel.js')).agentChannelBench(process.argv.slice(3));
  process.exit(0);
}

const opts = parseOptions(process.argv.slice(2), process.env);
const { quick, size, prefix: PREFIX } = opts;

/** Seeds the size (or takes an earlier run's data set with --reuse); undefined after --seed-only wrote its file. */
async function seedDataSet(bench: Bench, ctx: StoreContext, services: Stage['services'], loadAtStart: number[]): Promise<{ seeded: Seeded; seedSeconds?: number } | undefined> {
  const { client } = bench;
  if (opts.reuse) {
    log('reusing the data set of an earlier run (--reuse)');
    return { seeded: seededIds(size) };
  }
  const existing = await client.indices.get({ index: `${PREFIX}-*`, allow_no_indices: true, ignore_unavailable: true });
  for (const name of Object.keys(existing)) await client.indices.delete({ index: name });
  await ensureIndices(ctx, createLogger('warn'));
  const t0 = Date.now();
  const seeded = await seed(services, services.storeContext, size, log);
  const seedSeconds = Math.round((Date.now() - t0) / 100) / 10;
  log(`seeded ${size.name} in ${seedSeconds} s`);
  if (!opts.seedOnly) return { seeded, seedSeconds };
  const file = path.join('bench', 'results', `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-seed-${size.slug}.json`);
  const indices = await client.cat.indices({ index: `${PREFIX}-*`, format: 'json', bytes: 'b' });
  const seedOut = { date: new Date().toISOString(), sizeName: size.name, prefix: PREFIX, size, seedSeconds, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg(), indices };
  fs.writeFileSync(file, JSON.stringify(seedOut, null, 2) + '\n');
  log(`wrote ${file}`);
  return undefined;
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const loadAtStart = os.loadavg();
  log(`load average at start: ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
  const config = loadConfig({ ...process.env, ECS_INDEX_PREFIX: PREFIX });
  let esUrl = process.env.ELASTICSEARCH_URL;
  let stopNode: (() => Promise<void>) | undefined;
  if (!esUrl) {
    const node = await startLocalNode({ name: 'bench', port: 0, heap: '2g', log });
    esUrl = node.url;
    stopNode = () => node.stop();
  }
  const client = createClient(esUrl, 120_000, config.elasticsearchSecurity);
  const es = await esNode(client);
  const bench: Bench = { opts, config, client, esUrl, esPid: es.pid, log, settle: () => settle(client, PREFIX) };
  if (!opts.seedOnly) buildService(log);

  const wanted = REGISTRY.filter((s) => s.wanted(opts.select));
  const all: Record<string, unknown> = {};
  /** Parts that threw: the others' figures are still written, and the failure beside them. */
  const failedParts: Record<string, string> = {};
  const runPart = async (s: { name: string }, run: () => Promise<unknown>): Promise<void> => {
    try {
      all[s.name] = await run();
    } catch (err) {
      failedParts[s.name] = err instanceof Error ? err.message : String(err);
      log(`${s.name}: failed, the run goes on: ${failedParts[s.name]}`);
    }
  };
  let servicePeakRssMb: number | undefined;
  let serviceStampedInBackground: number | undefined;
  let seedSeconds: number | undefined;
  if (wanted.some((s) => s.phase !== 'alone')) {
    const ctx: StoreContext = { client, prefix: PREFIX, refresh: 'none' };
    const services = createServices({ config, store: ctx, log: createLogger('warn') });
    const data = await seedDataSet(bench, ctx, services, loadAtStart);
    if (!data) {
      await client.close();
      await stopNode?.();
      return;
    }
    seedSeconds = data.seedSeconds;
    const profileDir = opts.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-bench-prof-')) : undefined;
    const serviceEnv = { ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: PREFIX, ECS_ADMIN_TOKEN: opts.admin, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' };
    const svc = await startService({ runtime: opts.runtime, profileDir, env: serviceEnv });
    log(`service (${opts.runtime}) at ${svc.url}, pid ${svc.pid}; idle RSS ${sample(svc.pid).rssMb.toFixed(0)} MB`);
    const root = data.seeded.roots[0];
    const subtree = await services.orgs.subtree(root);
    const stage: Stage = {
      services,
      seeded: data.seeded,
      root,
      subtree,
      every: allScenarios({ client, prefix: PREFIX, seeded: data.seeded, root, subtree, distributor: DISTRIBUTOR }),
      serviceEnv,
      svc,
      callers: { admin: opts.admin, distributor: await mintToken(svc.url, opts.admin, 'bench-distributor-admin', DISTRIBUTOR) },
      ...(profileDir ? { hopProfileDir: path.join(profileDir, 'hop') } : {}),
    };
    for (const s of wanted.filter((x) => x.phase === 'service')) await runPart(s, () => s.run(bench, stage));
    servicePeakRssMb = sample(svc.pid).peakRssMb;
    await svc.stop();
    serviceStampedInBackground = await stampedInBackground(svc.logFile);
    if (serviceStampedInBackground > 0) {
      log(`warning: the service stamped ${serviceStampedInBackground} records without their ancestry in the background while it was measured (a direct write that lacks it?)`);
    }
    for (const s of wanted.filter((x) => x.phase === 'seeded')) await runPart(s, () => s.run(bench, stage));
    if (profileDir) {
      for (const [who, dir] of [['the service', profileDir], ['the bare hop', path.join(profileDir, 'hop')]]) {
        if (!fs.existsSync(dir)) continue;
        for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) console.error(`${who}: ${formatSummary(summarize(path.join(dir, f)))}`);
      }
    }
  }
  for (const s of wanted.filter((x) => x.phase === 'alone')) await runPart(s, () => s.run(bench, undefined));
  await client.close();
  await stopNode?.();

  const results = (all.results as ScenarioResult[] | undefined) ?? [];
  const migration = all.migration as MigrationResult | undefined;
  const ran = wanted.filter((s) => all[s.name] !== undefined);
  const targets = [...evaluateTargets(results, migration, servicePeakRssMb), ...ran.flatMap((s) => s.targets?.(all[s.name]) ?? [])];
  const out = {
    date: new Date().toISOString(),
    quick,
    sizeName: size.name,
    prefix: PREFIX,
    reuse: opts.reuse,
    seedSeconds,
    runtime: opts.runtime,
    nodeFlags: [...startFlags(), ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)].join(' '),
    // A profiled service runs slower: its figures compare only with other profiled runs.
    profiled: opts.profile,
    size,
    connections: opts.connections,
    roundSeconds: opts.roundS,
    warmupSeconds: opts.warmupS,
    rounds: opts.rounds,
    elapsedSeconds: Math.round((Date.now() - startedAt) / 1000),
    loadAverageAtStart: loadAtStart,
    machine: { ...machine(), elasticsearch: es.version, postgres: migration?.postgres },
    servicePeakRssMb,
    serviceStampedInBackground,
    failedParts,
    ...all,
    results,
    targets,
  };
  const file = path.join('bench', 'results', `${out.date.slice(0, 19).replace(/:/g, '-')}${quick ? '-quick' : `-${size.slug}`}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  // Untitled tables first (results always, then each that ran), the targets, then the titled ones.
  const tableOf = (s: (typeof REGISTRY)[number]): string => (all[s.name] === undefined ? '' : (s.table?.(all[s.name], all) ?? ''));
  const untitled = REGISTRY.filter((s) => !s.title).map((s) => (s.name === 'results' ? s.table!(results, all) : tableOf(s)));
  console.log(`\n${[...untitled.filter((t) => t !== ''), targetsTable(targets)].join('\n\n')}\n`);
  for (const s of ran.filter((x) => x.title)) console.log(`${s.title}:\n\n${tableOf(s)}\n`);
  for (const [name, message] of Object.entries(failedParts)) console.log(`${name}: failed, not measured: ${message}`);
  console.log(`wrote ${file}; ${out.elapsedSeconds} s in all; service peak RSS over the run ${servicePeakRssMb?.toFixed(0) ?? '-'} MB`);
}

await main();
