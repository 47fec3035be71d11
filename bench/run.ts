/**
 * `npm run bench [-- --size 14k|140k|1.4m] [-- --quick] [-- <scenario prefix>… | migration | org-create]`: seeds a realistic data set
 * through the service's own code, starts the service as `npm start` does (built to dist/,
 * plain node) and drives each scenario with autocannon (64 connections, no pipelining,
 * warm-up first), alternating with the same Elasticsearch requests issued directly at the
 * same concurrency (the floor the service stands on). Reports requests/s, p50/p99, service ÷
 * direct, CPU per request of the service and of Elasticsearch, the service's peak RSS, and
 * p99 at 70 % of the service's maximum rate; then the device migration (bench/migration.ts).
 * Writes bench/results/<date>.json and prints markdown tables (results and targets).
 *
 * Options: --size 14k|140k|1.4m (endpoints; default 140k; bench/seed.ts), --quick (the 14k
 * size with 5-s rounds), --short (5-s rounds at any size), --reuse (keep the data set of an
 * earlier run of the same size: no seeding), --no-direct (no rounds of the direct equivalents), --seed-only (seed, record the time, stop), --profile (the service under --cpu-prof; a
 * summary is printed), --tsx (run the service through the tsx loader instead of dist/).
 * ELASTICSEARCH_URL: use that cluster (the bench indices are `ecs-bench<size>-*`); unset, a
 * managed node named `bench` (2 GB heap, its data kept under .local/es-bench/) is started
 * and stopped, or reused when already running.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Client } from '@elastic/elasticsearch';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createServices } from '../src/resources/index.js';
import { ensureIndices } from '../src/store/indices.js';
import { aliasName, createClient, type StoreContext } from '../src/store/client.js';
import { startLocalNode } from '../src/dev/local-elasticsearch.js';
import { runDirect, type RoundResult } from './direct.js';
import { cpuSeconds, esNode, machine, sample, watchRss } from './proc.js';
import { DISTRIBUTOR, QUICK, seed, seededIds, sizeNamed, type Seeded } from './seed.js';
import { scenarios as allScenarios, type Scenario } from './scenarios.js';
import { buildService, startHop, startService, type Runtime } from './service-process.js';
import { formatSummary, summarize } from './profile.js';
import { migrationBench, type MigrationResult } from './migration.js';
import { overloadBench, overloadTable, type OverloadResult } from './overload.js';
import { createBench, createTable, createTargets, type CreateResult } from './create.js';
import { overviewBench, overviewTable, overviewTargets, type OverviewResult } from './overview.js';
import { jobsBench, jobsTable, type JobsResult } from './jobs.js';
import { consoleBench, consoleTable, consoleTargets, type ConsoleResult } from './console.js';
import { exportBench, exportTable, exportTargets, type ExportResult } from './export.js';
import { orgCreateBench, orgCreateInTree, orgCreateTable, orgCreateTargets, type OrgCreateInTree, type OrgCreateResult } from './org-create.js';
import { tracingBench, tracingTable, type TracingResult } from './tracing.js';
import { evaluateTargets, resultsTable, targetsTable, type ScenarioResult, type ServiceRound } from './report.js';

const args = process.argv.slice(2);
// Held agent channels: a scenario of its own, with its own instances and load generators (bench/agent-channel.ts).
if (args[0] === 'agent-channel') {
  await (await import('./agent-channel.js')).agentChannelBench(args.slice(1));
  process.exit(0);
}
const quick = args.includes('--quick');
const sizeAt = args.indexOf('--size');
const sizeArg = sizeAt >= 0 ? args[sizeAt + 1] : undefined;
if (sizeAt >= 0) args.splice(sizeAt, 2);
const size = quick ? QUICK : sizeNamed(sizeArg ?? '140k');
const short = quick || args.includes('--short');
// Seed the size and stop (its time in bench/results/<date>-seed-<size>.json); later runs take --reuse.
const seedOnly = args.includes('--seed-only');
// Without the direct equivalents' rounds (the bare hop still runs): a shorter run for the curve across sizes.
const noDirect = args.includes('--no-direct');
const reuse = args.includes('--reuse');
const profile = args.includes('--profile');
const runtime: Runtime = args.includes('--tsx') ? 'tsx' : 'dist';
const only = args.filter((a) => !a.startsWith('--'));
const wantMigration = only.length === 0 || only.includes('migration');
const wantOverload = only.length === 0 || only.includes('overload');
const wantJobs = only.length === 0 || only.includes('jobs');
const wantOrgCreate = only.length === 0 || only.includes('org-create');
// Organization creates into the seeded tree (its full size), on the running service.
const wantOrgCreateAtSize = only.length === 0 || only.includes('org-create-tree');
// Traces off against on at 10 % (and against BENCH_BEFORE_DIR's build): only when asked.
const wantTracing = only.includes('tracing');
const scenarioFilter = only.filter((o) => o !== 'migration' && o !== 'overload' && o !== 'jobs' && o !== 'org-create' && o !== 'org-create-tree' && o !== 'tracing');
const wantScenarios = only.length === 0 || scenarioFilter.length > 0 || wantOrgCreateAtSize;
const CREATE_SCENARIOS = ['create-sequential', 'create-concurrent'];
const wantCreate = wantScenarios && (scenarioFilter.length === 0 || CREATE_SCENARIOS.some((n) => scenarioFilter.some((o) => n.startsWith(o))));
const wantOverview = wantScenarios && (scenarioFilter.length === 0 || scenarioFilter.some((o) => 'overview'.startsWith(o)));
const wantConsole = wantScenarios && (scenarioFilter.length === 0 || scenarioFilter.some((o) => 'console'.startsWith(o)));
const wantExport = wantScenarios && (scenarioFilter.length === 0 || scenarioFilter.some((o) => 'export'.startsWith(o)));
const CONNECTIONS = 64;
const ROUND_S = short ? 5 : 10;
const WARMUP_S = short ? 2 : 3;
const ROUNDS = 2;
// One prefix per size (no prefix extends another's, so `<prefix>-*` never reaches another size's
// indices): the three sizes coexist on one node. BENCH_INDEX_PREFIX replaces it.
const PREFIX = process.env.BENCH_INDEX_PREFIX ?? `ecs-bench${size.slug}`;
const ADMIN = `bench-${crypto.randomBytes(12).toString('hex')}`;
const log = (l: string): void => console.error(`[bench] ${new Date().toISOString().slice(11, 19)} ${l}`);

/** autocannon at CONNECTIONS connections, no pipelining, for `seconds`. */
function drive(url: string, requests: autocannon.Request[], seconds: number, extra: Partial<autocannon.Options> = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests, ...extra }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** The distributor admin's token, minted once the service runs (the distributor scenarios' caller). */
let distributorToken: string | undefined;

async function cannon(url: string, sc: Scenario, seconds: number, rate?: number): Promise<{ res: autocannon.Result; firstError?: string }> {
  let n = 0;
  let firstError: string | undefined;
  const req = sc.service(() => n++);
  req.onResponse = (status: number, body: string) => {
    if (status >= 300 && firstError === undefined) firstError = `${status} ${String(body).slice(0, 300)}`;
  };
  const res = await drive(url, [req], seconds, {
    ...(rate ? { overallRate: rate } : {}),
    headers: { 'x-auth-token': sc.caller === 'distributor' ? (distributorToken ?? ADMIN) : ADMIN, 'content-type': 'application/json' },
  });
  return { res, firstError };
}

/** autocannon against the bare hop: request i of scenario k is `POST /k/i`; with `rate`, at that overall rate. */
function cannonHop(url: string, k: number, seconds: number, rate?: number): Promise<autocannon.Result> {
  let n = 0;
  return drive(url, [{ method: 'POST', setupRequest: (r) => ({ ...r, path: `/${k}/${n++}` }) }], seconds, rate ? { overallRate: rate } : {});
}

function fromCannon(r: autocannon.Result): RoundResult {
  const ok = r.requests.total - r.non2xx - r.errors;
  return {
    requests: r.requests.total,
    errors: r.non2xx + r.errors,
    durationS: r.duration,
    rps: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
  };
}

/** The service's memory after a scenario, from its own /metrics (MB). */
async function serviceMemory(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  const round = (n: number): number => Math.round(n * 10) / 10;
  return {
    rssMb: round(metric('process_resident_memory_bytes')),
    heapTotalMb: round(metric('nodejs_heap_size_total_bytes')),
    heapUsedMb: round(metric('nodejs_heap_size_used_bytes')),
    externalMb: round(metric('nodejs_external_memory_bytes')),
  };
}

/** What the service's /metrics says about one round: event-loop delay (reset at each scrape) and GC time. */
async function serviceMetrics(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const val = (re: RegExp): number => Number(re.exec(text)?.[1] ?? NaN);
  const out: Record<string, number> = {
    eventLoopDelayP99Ms: val(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m) * 1000,
    eventLoopDelayMaxMs: val(/^nodejs_eventloop_lag_max_seconds (\S+)$/m) * 1000,
  };
  for (const kind of ['minor', 'major', 'incremental']) {
    out[`gc_${kind}_ms`] = val(new RegExp(`^nodejs_gc_duration_seconds_sum\\{kind="${kind}"\\} (\\S+)$`, 'm')) * 1000;
    out[`gc_${kind}_count`] = val(new RegExp(`^nodejs_gc_duration_seconds_count\\{kind="${kind}"\\} (\\S+)$`, 'm'));
  }
  return out;
}

/** Elasticsearch's counters that explain tail latency: JVM GC, refreshes, merges, indexing. */
async function esCounters(client: Client): Promise<Record<string, number>> {
  const res = await client.nodes.stats({ node_id: '_local', metric: ['jvm', 'indices'] });
  const n = Object.values(res.nodes)[0];
  const gc = n?.jvm?.gc?.collectors ?? {};
  return {
    youngGcCount: gc.young?.collection_count ?? 0,
    youngGcMs: gc.young?.collection_time_in_millis ?? 0,
    oldGcCount: gc.old?.collection_count ?? 0,
    oldGcMs: gc.old?.collection_time_in_millis ?? 0,
    refreshCount: n?.indices?.refresh?.total ?? 0,
    refreshMs: n?.indices?.refresh?.total_time_in_millis ?? 0,
    mergeMs: n?.indices?.merges?.total_time_in_millis ?? 0,
    indexingMs: n?.indices?.indexing?.index_time_in_millis ?? 0,
  };
}

/**
 * Lets Elasticsearch finish the background work earlier load left (merges of the seeded or
 * churned segments) so that each scenario starts from an idle store: a refresh of the bench
 * indices, then until no merge runs (two polls in a row), at most `maxS` seconds.
 */
async function settle(client: Client, prefix: string, maxS = 90): Promise<number> {
  const t0 = Date.now();
  await client.indices.refresh({ index: `${prefix}-*`, allow_no_indices: true, ignore_unavailable: true });
  let quiet = 0;
  while (Date.now() - t0 < maxS * 1000 && quiet < 2) {
    const res = await client.nodes.stats({ node_id: '_local', metric: ['indices'], index_metric: ['merge'] });
    const current = Object.values(res.nodes)[0]?.indices?.merges?.current ?? 0;
    quiet = current === 0 ? quiet + 1 : 0;
    if (quiet < 2) await new Promise((r) => setTimeout(r, 1000));
  }
  return (Date.now() - t0) / 1000;
}

function delta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(b).map((k) => [k, Math.round((b[k] - (a[k] ?? 0)) * 10) / 10]));
}

/** CPU milliseconds a process spent per request over a round. */
function msPerRequest(before: number | undefined, after: number | undefined, requests: number): number | undefined {
  return before === undefined || after === undefined || requests === 0 ? undefined : ((after - before) * 1000) / requests;
}

/** A token of `role` admin at `orgId`, minted through the service with the system token. */
async function mintToken(url: string, name: string, orgId: string): Promise<string> {
  const res = await fetch(`${url}/endpoint-control-service/v1/admin/tokens`, {
    method: 'POST',
    headers: { 'x-auth-token': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({ name, role: 'admin', orgId }),
  });
  if (res.status !== 201) throw new Error(`minting ${name}: ${res.status} ${await res.text()}`);
  const token = ((await res.json()) as { token: string }).token;
  // Until the new token authenticates: 64 connections refused at once would trip the failed-authentication limit.
  for (let k = 0; k < 100; k++) {
    const probe = await fetch(`${url}/endpoint-control-service/v1/lte-endpoint/data-usage-sum`, { headers: { 'x-auth-token': token } });
    await probe.arrayBuffer();
    if (probe.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return token;
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
  const esPid = es.pid;
  if (!seedOnly) buildService(log);

  const results: ScenarioResult[] = [];
  let servicePeakRssMb: number | undefined;
  let profileSummary: string | undefined;
  let overload: OverloadResult | undefined;
  let create: CreateResult | undefined;
  let overview: OverviewResult | undefined;
  let overviewDistributor: OverviewResult | undefined;
  let orgCreateAtSize: OrgCreateInTree | undefined;
  let seedSeconds: number | undefined;
  let jobs: JobsResult | undefined;
  let consoleResult: ConsoleResult | { error: string } | undefined;
  let exported: ExportResult | undefined;
  let tracing: TracingResult | undefined;
  if (wantScenarios || wantOverload || wantJobs || wantTracing) {
    const ctx: StoreContext = { client, prefix: PREFIX, refresh: 'none' };
    const services = createServices({ config, store: ctx, log: createLogger('warn') });
    let seeded: Seeded;
    if (reuse) {
      seeded = seededIds(size);
      log('reusing the data set of an earlier run (--reuse)');
    } else {
      const existing = await client.indices.get({ index: `${PREFIX}-*`, allow_no_indices: true, ignore_unavailable: true });
      for (const name of Object.keys(existing)) await client.indices.delete({ index: name });
      await ensureIndices(ctx, createLogger('warn'));
      const t0 = Date.now();
      seeded = await seed(services, services.storeContext, size, log);
      seedSeconds = Math.round((Date.now() - t0) / 100) / 10;
      log(`seeded ${size.name} in ${seedSeconds} s`);
      if (seedOnly) {
        const file = path.join('bench', 'results', `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}-seed-${size.slug}.json`);
        const indices = await client.cat.indices({ index: `${PREFIX}-*`, format: 'json', bytes: 'b' });
        const seedOut = { date: new Date().toISOString(), sizeName: size.name, prefix: PREFIX, size, seedSeconds, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg(), indices };
        fs.writeFileSync(file, JSON.stringify(seedOut, null, 2) + '\n');
        log(`wrote ${file}`);
        await client.close();
        await stopNode?.();
        return;
      }
    }

    const profileDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-bench-prof-')) : undefined;
    const serviceEnv = { ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: PREFIX, ECS_ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' };
    const svc = await startService({ runtime, profileDir, env: serviceEnv });
    log(`service (${runtime}) at ${svc.url}, pid ${svc.pid}; idle RSS ${sample(svc.pid).rssMb.toFixed(0)} MB`);
    const root = seeded.roots[0];
    const subtree = await services.orgs.subtree(root);
    const every = allScenarios({ client, prefix: PREFIX, seeded, root, subtree, distributor: DISTRIBUTOR });
    distributorToken = await mintToken(svc.url, 'bench-distributor-admin', DISTRIBUTOR);
    const list = wantScenarios ? every.filter((s) => scenarioFilter.length === 0 || scenarioFilter.some((o) => s.name.startsWith(o))) : [];
    const hop = await startHop({
      ELASTICSEARCH_URL: esUrl,
      BENCH_PREFIX: PREFIX,
      BENCH_SIZE: size.name,
      BENCH_DISTRIBUTOR: DISTRIBUTOR,
      BENCH_ROOT: root,
      BENCH_SUBTREE: JSON.stringify(subtree),
    });
    log(`bare hop at ${hop.url}, pid ${hop.pid}`);

    for (const sc of list) {
      const waited = await settle(client, PREFIX);
      log(`${sc.name}: Elasticsearch settled in ${waited.toFixed(0)} s; warm-up`);
      const warm = await cannon(svc.url, sc, WARMUP_S);
      if (warm.firstError) log(`${sc.name}: warm-up error: ${warm.firstError}`);
      if (!noDirect) await runDirect(sc.direct, CONNECTIONS, WARMUP_S);
      const svcRounds: ServiceRound[] = [];
      const directRounds: (RoundResult & { esCpuMsPerRequest?: number })[] = [];
      let at70: { res: autocannon.Result } | undefined;
      let at70Direct: RoundResult | undefined;
      let at70Diagnostics: ScenarioResult['at70Diagnostics'] | undefined;
      let rate = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const before = sample(svc.pid);
        const esBefore = cpuSeconds(esPid);
        const rss = watchRss(svc.pid);
        const { res, firstError } = await cannon(svc.url, sc, ROUND_S);
        const r = fromCannon(res);
        const after = sample(svc.pid);
        const esAfter = cpuSeconds(esPid);
        svcRounds.push({
          ...r,
          cpuPercent: (100 * (after.cpuSeconds - before.cpuSeconds)) / Math.max(0.001, (after.at - before.at) / 1000),
          cpuMsPerRequest: msPerRequest(before.cpuSeconds, after.cpuSeconds, r.requests) ?? 0,
          esCpuMsPerRequest: msPerRequest(esBefore, esAfter, r.requests),
          peakRssMb: rss.stop(),
          ...(firstError ? { firstError } : {}),
        });
        if (round === ROUNDS - 1) {
          // p99 at 70 % of the best rate seen, right after a service round (not after a direct
          // one, whose background work — merges of its forced refreshes — would land on it).
          rate = Math.max(1, Math.floor(Math.max(...svcRounds.map((x) => x.rps)) * 0.7));
          const m0 = await serviceMetrics(svc.url);
          const e0 = await esCounters(client);
          at70 = await cannon(svc.url, sc, ROUND_S, rate);
          const m1 = await serviceMetrics(svc.url);
          at70Diagnostics = {
            service: {
              eventLoopDelayP99Ms: Math.round(m1.eventLoopDelayP99Ms * 10) / 10,
              eventLoopDelayMaxMs: Math.round(m1.eventLoopDelayMaxMs * 10) / 10,
              ...delta(
                Object.fromEntries(Object.entries(m0).filter(([k]) => k.startsWith('gc_'))),
                Object.fromEntries(Object.entries(m1).filter(([k]) => k.startsWith('gc_'))),
              ),
            },
            elasticsearch: delta(e0, await esCounters(client)),
          };
          // The floor's tail at the same rate.
          if (!noDirect) at70Direct = await runDirect(sc.direct, CONNECTIONS, ROUND_S, rate);
        }
        if (noDirect) continue;
        const dBefore = cpuSeconds(esPid);
        const d = await runDirect(sc.direct, CONNECTIONS, ROUND_S);
        directRounds.push({ ...d, esCpuMsPerRequest: msPerRequest(dBefore, cpuSeconds(esPid), d.requests) });
      }
      // The bare hop: warm-up, then one round, measured like the service's.
      await cannonHop(hop.url, every.indexOf(sc), WARMUP_S);
      const hopBefore = sample(hop.pid);
      const hopEsBefore = cpuSeconds(esPid);
      const hopRes = fromCannon(await cannonHop(hop.url, every.indexOf(sc), ROUND_S));
      const hopRound = {
        ...hopRes,
        cpuMsPerRequest: msPerRequest(hopBefore.cpuSeconds, sample(hop.pid).cpuSeconds, hopRes.requests),
        esCpuMsPerRequest: msPerRequest(hopEsBefore, cpuSeconds(esPid), hopRes.requests),
      };
      // The hop at the service's 70 % rate: splits the service's p99 there into the hop's and the service's own.
      const hopAt70 = fromCannon(await cannonHop(hop.url, every.indexOf(sc), ROUND_S, rate));
      const best = <T extends RoundResult>(rs: T[]): T => rs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const s = best(svcRounds);
      const d = directRounds.length > 0 ? best(directRounds) : { requests: 0, errors: 0, durationS: 0, rps: 0, p50: 0, p99: 0, max: 0 };
      const a = fromCannon((at70 as { res: autocannon.Result }).res);
      const res: ScenarioResult = {
        name: sc.name,
        memory: await serviceMemory(svc.url),
        serviceWork: sc.serviceWork,
        directWork: sc.directWork,
        service: s,
        serviceRounds: svcRounds.map((x) => Math.round(x.rps)),
        direct: d,
        directRounds: directRounds.map((x) => Math.round(x.rps)),
        ratio: d.requests > 0 ? s.rps / Math.max(1, d.rps) : 0,
        at70: { rate, rps: a.rps, p50: a.p50, p99: a.p99, errors: a.errors },
        at70Diagnostics,
        at70Direct: { rps: at70Direct?.rps ?? 0, p50: at70Direct?.p50 ?? 0, p99: at70Direct?.p99 ?? 0, errors: at70Direct?.errors ?? 0 },
        hop: hopRound,
        at70Hop: { rps: hopAt70.rps, p50: hopAt70.p50, p99: hopAt70.p99, errors: hopAt70.errors },
      };
      results.push(res);
      log(
        `${sc.name}: service ${s.rps.toFixed(0)} rps p50 ${s.p50} p99 ${s.p99} ms (errors ${s.errors}${s.firstError ? `: ${s.firstError}` : ''}; ` +
          `${s.cpuMsPerRequest.toFixed(3)} ms CPU/req, ES ${s.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req; rss ${s.peakRssMb.toFixed(0)} MB) | ` +
          `direct ${d.rps.toFixed(0)} rps p50 ${d.p50.toFixed(1)} p99 ${d.p99.toFixed(1)} ms (ES ${d.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req) | ` +
          `ratio ${res.ratio.toFixed(2)} | bare hop ${hopRound.rps.toFixed(0)} rps p99 ${hopRound.p99} ms (errors ${hopRound.errors}; ${hopRound.cpuMsPerRequest?.toFixed(3) ?? '?'} ms CPU/req, ES ${hopRound.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req) | at 70 % (${rate}/s) p99 ${a.p99} ms, hop ${hopAt70.p99} ms, direct ${res.at70Direct.p99.toFixed(1)} ms | memory ${JSON.stringify(res.memory)} | at 70 %: ${JSON.stringify(res.at70Diagnostics)}`,
      );
    }
    if (wantOverload) {
      await settle(client, PREFIX);
      overload = await overloadBench({ client, prefix: PREFIX, runtime, serviceEnv, admin: ADMIN, esPid, root, agentIds: seeded.agentIds, quick, log });
    }
    if (wantCreate) {
      create = await createBench({
        client,
        prefix: PREFIX,
        serviceUrl: svc.url,
        token: ADMIN,
        orgId: root,
        connections: CONNECTIONS,
        roundS: ROUND_S,
        rounds: ROUNDS,
        settle: () => settle(client, PREFIX),
        log,
      });
    }
    if (wantOverview) {
      await settle(client, PREFIX);
      overview = await overviewBench({ serviceUrl: svc.url, adminToken: ADMIN, root, viewers: 8, roundS: ROUND_S, warmupS: WARMUP_S, log });
      await settle(client, PREFIX);
      overviewDistributor = await overviewBench({ serviceUrl: svc.url, adminToken: ADMIN, root: DISTRIBUTOR, viewers: 8, roundS: ROUND_S, warmupS: WARMUP_S, log });
    }
    if (wantOrgCreateAtSize) {
      await settle(client, PREFIX);
      // Into the seeded tree (all of the size's organizations), below one of the distributor's customers.
      orgCreateAtSize = await orgCreateInTree({ serviceUrl: svc.url, token: ADMIN, parent: `${DISTRIBUTOR}-r0-c0`,
        creates: 200,
        organizations: (await client.count({ index: aliasName(PREFIX, 'organizations') })).count,
        log,
      });
    }
    if (wantConsole) {
      await settle(client, PREFIX);
      // The operator console in Chromium; a missing browser is reported, not fatal.
      consoleResult = await consoleBench({ serviceUrl: svc.url, adminToken: ADMIN, root, loads: 10, log }).catch((e: unknown) => {
        log(`console: not measured: ${String(e)}`);
        return { error: String(e) };
      });
    }
    if (wantExport) {
      await settle(client, PREFIX);
      exported = await exportBench({
        client,
        prefix: PREFIX,
        serviceUrl: svc.url,
        servicePid: svc.pid,
        adminToken: ADMIN,
        root,
        log,
      });
    }
    servicePeakRssMb = sample(svc.pid).peakRssMb;
    await svc.stop();
    if (wantTracing) {
      tracing = await tracingBench({
        runtime,
        serviceEnv,
        scenarios: every.filter((sc) => sc.name === 'connect' || sc.name.startsWith('page-search')),
        rounds: quick ? 3 : 4,
        roundSeconds: ROUND_S,
        warmupSeconds: WARMUP_S,
        drive: (url, sc, seconds) => cannon(url, sc, seconds),
        fromCannon,
        log,
      });
    }
    // Last: the job writes a module record for every agent.
    if (wantJobs) {
      await settle(client, PREFIX);
      jobs = await jobsBench({ runtime, serviceEnv, admin: ADMIN, agentIds: seeded.agentIds, quick, log });
    }
    await hop.stop();
    if (profileDir) {
      for (const f of fs.readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile'))) {
        const file = path.join(profileDir, f);
        profileSummary = formatSummary(summarize(file));
        console.error(profileSummary);
      }
    }
  }

  let orgCreate: OrgCreateResult | undefined;
  if (wantOrgCreate) {
    // Its own indices (a prefix that does not extend the data set's), empty at the start.
    orgCreate = await orgCreateBench({ client, esUrl, esPid, prefix: `${PREFIX}org`, runtime, quick, log });
  }

  let migration: MigrationResult | undefined;
  if (wantMigration) {
    migration = await migrationBench({ client, esUrl, esPid, prefix: PREFIX, config, size, log });
  }
  await client.close();
  await stopNode?.();

  const targets = [
    ...evaluateTargets(results, migration, servicePeakRssMb),
    ...(create ? createTargets(create) : []),
    ...(overview ? overviewTargets(overview) : []),
    ...(overviewDistributor ? overviewTargets(overviewDistributor, 'distributor ') : []),
    ...(orgCreateAtSize ? [{ target: `org-create into ${orgCreateAtSize.organizations} organizations: p50 ≤ 30 ms`, measured: `${orgCreateAtSize.p50} ms`, met: orgCreateAtSize.p50 <= 30 }] : []),
    ...(consoleResult && !('error' in consoleResult) ? consoleTargets(consoleResult) : []),
    ...(exported ? exportTargets(exported) : []),
    ...(orgCreate ? orgCreateTargets(orgCreate) : []),
  ];
  const out = {
    date: new Date().toISOString(),
    quick,
    sizeName: size.name,
    prefix: PREFIX,
    reuse,
    seedSeconds,
    runtime,
    nodeFlags: process.env.BENCH_NODE_FLAGS ?? '',
    size,
    connections: CONNECTIONS,
    roundSeconds: ROUND_S,
    warmupSeconds: WARMUP_S,
    rounds: ROUNDS,
    elapsedSeconds: Math.round((Date.now() - startedAt) / 1000),
    loadAverageAtStart: loadAtStart,
    machine: { ...machine(), elasticsearch: es.version, postgres: migration?.postgres },
    servicePeakRssMb,
    results,
    create,
    overview,
    overviewDistributor,
    orgCreateAtSize,
    console: consoleResult,
    export: exported,
    orgCreate,
    migration,
    overload,
    jobs,
    tracing,
    targets,
  };
  const file = path.join('bench', 'results', `${out.date.slice(0, 19).replace(/:/g, '-')}${quick ? '-quick' : `-${size.slug}`}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(`\n${resultsTable(results, migration)}\n\n${create ? `${createTable(create)}\n\n` : ''}${overview ? `${overviewTable(overview)}\n\n` : ''}${consoleResult && !('error' in consoleResult) ? `${consoleTable(consoleResult)}\n\n` : ''}${exported ? `${exportTable(exported)}\n\n` : ''}${targetsTable(targets)}\n`);
  if (orgCreate) console.log(`Organization creates (org-create):\n\n${orgCreateTable(orgCreate)}\n`);
  if (overload) console.log(`Overload:\n\n${overloadTable(overload)}\n`);
  if (jobs) console.log(`Bulk actions as jobs:\n\n${jobsTable(jobs)}\n`);
  if (tracing) console.log(`Traces:\n\n${tracingTable(tracing)}\n`);
  console.log(
    `wrote ${file}; ${out.elapsedSeconds} s in all; service peak RSS over the run ${servicePeakRssMb?.toFixed(0) ?? '-'} MB`,
  );
}

await main();
