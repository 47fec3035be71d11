/**
 * The request scenarios: each against the service, the bare hop (bench/hop-server.ts) and the
 * same Elasticsearch requests issued directly (the floor), their rounds alternating, then p99 at
 * 70 % of the service's best rate for all three, with memory, the counters that explain tail
 * latency, and how quiet the machine was (bench/quiet.ts: ratios taken beside other work are void).
 */
import type autocannon from 'autocannon';
import { runDirect, type RoundResult } from './direct.js';
import { cannon, cannonHop, delta, esCounters, fromCannon, msPerRequest, serviceMemory, serviceMetrics } from './measure.js';
import { cpuSeconds, sample, watchRss } from './proc.js';
import { watchQuiet } from './quiet.js';
import type { ScenarioResult, ServiceRound } from './report.js';
import type { Scenario } from './scenario.js';
import { DISTRIBUTOR } from './seed.js';
import { startHop, type ServiceProcess } from './service-process.js';
import type { Bench, Stage } from './stage.js';

/** Every request scenario the selection names, each measured as above; the bare hop runs for their length. */
export async function requestScenarios(bench: Bench, stage: Stage): Promise<ScenarioResult[]> {
  const { opts, esUrl, log } = bench;
  const { scenarioFilter } = opts.select;
  const list = stage.every.filter((s) => scenarioFilter.length === 0 || scenarioFilter.some((o) => s.name.startsWith(o)));
  const hop = await startHop({
    ELASTICSEARCH_URL: esUrl,
    BENCH_PREFIX: opts.prefix,
    BENCH_SIZE: opts.size.name,
    BENCH_DISTRIBUTOR: DISTRIBUTOR,
    BENCH_ROOT: stage.root,
    BENCH_SUBTREE: JSON.stringify(stage.subtree),
  }, stage.hopProfileDir);
  log(`bare hop at ${hop.url}, pid ${hop.pid}`);
  const results: ScenarioResult[] = [];
  try {
    for (const sc of list) results.push(await measure(bench, stage, hop, sc));
  } finally {
    await hop.stop();
  }
  return results;
}

async function measure(bench: Bench, stage: Stage, hop: ServiceProcess, sc: Scenario): Promise<ScenarioResult> {
  const { log } = bench;
  if (sc.prepare) {
    log(`${sc.name}: preparing the store`);
    await sc.prepare();
  }
  const waited = await bench.settle();
  const stopBackground = sc.background?.();
  let res: ScenarioResult | undefined;
  try {
    res = await measureRounds(bench, stage, hop, sc, waited);
  } finally {
    const done = await stopBackground?.();
    if (done !== undefined) {
      log(`${sc.name}: ${done} background writes beside it`);
      if (res) res.backgroundWrites = done;
    }
  }
  return res;
}

async function measureRounds(
  bench: Bench,
  stage: Stage,
  hop: ServiceProcess,
  sc: Scenario,
  waited: number,
): Promise<ScenarioResult> {
  const { opts, client, esPid, log } = bench;
  const { svc, callers } = stage;
  const { connections, roundS, warmupS, rounds, noDirect } = opts;
  const shoot = (seconds: number, rate?: number) => cannon(svc.url, connections, callers, sc, seconds, rate);
  const k = stage.every.indexOf(sc);
  const quiet = watchQuiet(esPid);
  log(`${sc.name}: Elasticsearch settled in ${waited.toFixed(0)} s; warm-up`);
  const warm = await shoot(warmupS);
  if (warm.firstError) log(`${sc.name}: warm-up error: ${warm.firstError}`);
  if (!noDirect) await runDirect(sc.direct, connections, warmupS);
  await cannonHop(hop.url, connections, sc, k, warmupS);
  const svcRounds: ServiceRound[] = [];
  const hopRounds: HopRound[] = [];
  const directRounds: (RoundResult & { esCpuMsPerRequest?: number })[] = [];
  let at70: { res: autocannon.Result } | undefined;
  let at70Direct: RoundResult | undefined;
  let at70Diagnostics: ScenarioResult['at70Diagnostics'] | undefined;
  let rate = 0;
  for (let round = 0; round < rounds; round++) {
    const before = sample(svc.pid);
    const esBefore = cpuSeconds(esPid);
    const rss = watchRss(svc.pid);
    const { res, firstError } = await shoot(roundS);
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
    if (round === rounds - 1) {
      // p99 at 70 % of the best rate seen, right after a service round (not after a direct
      // one, whose background work — merges of its forced refreshes — would land on it).
      rate = Math.max(1, Math.floor(Math.max(...svcRounds.map((x) => x.rps)) * 0.7));
      const m0 = await serviceMetrics(svc.url);
      const e0 = await esCounters(client);
      at70 = await shoot(roundS, rate);
      const m1 = await serviceMetrics(svc.url);
      const gc = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('gc_')));
      at70Diagnostics = {
        service: {
          eventLoopDelayP99Ms: Math.round(m1.eventLoopDelayP99Ms * 10) / 10,
          eventLoopDelayMaxMs: Math.round(m1.eventLoopDelayMaxMs * 10) / 10,
          ...delta(gc(m0), gc(m1)),
        },
        elasticsearch: delta(e0, await esCounters(client)),
      };
      // The floor's tail at the same rate.
      if (!noDirect) at70Direct = await runDirect(sc.direct, connections, roundS, rate);
    }
    // The hop's round right after the service's: both see the same state of the store.
    hopRounds.push(await hopRound(hop, sc, k, bench, roundS));
    if (noDirect) continue;
    const dBefore = cpuSeconds(esPid);
    const d = await runDirect(sc.direct, connections, roundS);
    directRounds.push({ ...d, esCpuMsPerRequest: msPerRequest(dBefore, cpuSeconds(esPid), d.requests) });
  }
  // The hop at the service's 70 % rate: splits the service's p99 there into the hop's and the service's own.
  const hopAt70 = fromCannon(await cannonHop(hop.url, connections, sc, k, roundS, rate));
  const best = <T extends RoundResult>(rs: T[]): T => rs.reduce((a, b) => (b.rps > a.rps ? b : a));
  const s = best(svcRounds);
  const hopBest = best(hopRounds);
  const d = directRounds.length > 0 ? best(directRounds) : { requests: 0, errors: 0, durationS: 0, rps: 0, p50: 0, p99: 0, max: 0 };
  const a = fromCannon((at70 as { res: autocannon.Result }).res);
  const res: ScenarioResult = {
    name: sc.name,
    memory: await serviceMemory(svc.url),
    serviceWork: sc.serviceWork,
    directWork: sc.directWork,
    service: s,
    serviceRounds: svcRounds.map((x) => Math.round(x.rps)),
    hopRounds: hopRounds.map((x) => Math.round(x.rps)),
    direct: d,
    directRounds: directRounds.map((x) => Math.round(x.rps)),
    ratio: d.requests > 0 ? s.rps / Math.max(1, d.rps) : 0,
    at70: { rate, rps: a.rps, p50: a.p50, p99: a.p99, errors: a.errors },
    at70Diagnostics,
    at70Direct: { rps: at70Direct?.rps ?? 0, p50: at70Direct?.p50 ?? 0, p99: at70Direct?.p99 ?? 0, errors: at70Direct?.errors ?? 0 },
    hop: hopBest,
    quiet: quiet.stop(),
    at70Hop: { rps: hopAt70.rps, p50: hopAt70.p50, p99: hopAt70.p99, errors: hopAt70.errors },
  };
  log(
    `${sc.name}: service ${s.rps.toFixed(0)} rps p50 ${s.p50} p99 ${s.p99} ms (errors ${s.errors}${s.firstError ? `: ${s.firstError}` : ''}; ` +
      `${s.cpuMsPerRequest.toFixed(3)} ms CPU/req, ES ${s.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req; rss ${s.peakRssMb.toFixed(0)} MB) | ` +
      `direct ${d.rps.toFixed(0)} rps p50 ${d.p50.toFixed(1)} p99 ${d.p99.toFixed(1)} ms (ES ${d.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req) | ` +
      `ratio ${res.ratio.toFixed(2)} | bare hop ${hopBest.rps.toFixed(0)} rps p99 ${hopBest.p99} ms (errors ${hopBest.errors}; ${hopBest.cpuMsPerRequest?.toFixed(3) ?? '?'} ms CPU/req, ES ${hopBest.esCpuMsPerRequest?.toFixed(3) ?? '?'} ms/req; rounds ${res.hopRounds?.join(', ')}; service rounds ${res.serviceRounds.join(', ')}) | at 70 % (${rate}/s) p99 ${a.p99} ms, hop ${hopAt70.p99} ms, direct ${res.at70Direct.p99.toFixed(1)} ms | memory ${JSON.stringify(res.memory)} | at 70 %: ${JSON.stringify(res.at70Diagnostics)}`,
  );
  if (res.quiet?.void) log(`${sc.name}: VOID — other processes used ${res.quiet.othersCpuPercent} % of a core (${JSON.stringify(res.quiet.busiest)}); its ratios are a direction only`);
  return res;
}

type HopRound = RoundResult & { cpuMsPerRequest?: number; esCpuMsPerRequest?: number };

/** One round of the bare hop, measured like the service's. */
async function hopRound(hop: ServiceProcess, sc: Scenario, k: number, bench: Bench, roundS: number): Promise<HopRound> {
  const before = sample(hop.pid);
  const esBefore = cpuSeconds(bench.esPid);
  const r = fromCannon(await cannonHop(hop.url, bench.opts.connections, sc, k, roundS));
  return {
    ...r,
    cpuMsPerRequest: msPerRequest(before.cpuSeconds, sample(hop.pid).cpuSeconds, r.requests),
    esCpuMsPerRequest: msPerRequest(esBefore, cpuSeconds(bench.esPid), r.requests),
  };
}
