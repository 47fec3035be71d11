/**
 * The overload scenario: agents at a fixed rate (30 % of the connect maximum) alone,
 * then with SOC page-searches and aggregations offered at 3 × their maximum; then a flood of
 * bogus tokens at the maximum rate against the service as configured and against the same
 * service with the failed-authentication protections off (what main did), with agents at
 * their rate alongside. Open-loop load: a request is offered on schedule whatever happened to
 * the previous ones, so a late answer does not slow the offer down (no coordinated omission).
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import type { Client } from '@elastic/elasticsearch';
import { aliasName } from '../src/store/client.js';
import { cpuSeconds } from './proc.js';
import { API } from './scenario.js';
import { startService, type Runtime } from './service-process.js';
import { openLoop, openLoopInWorker, pool, summary, type OpenLoopResult, type Req } from './open-loop.js';

export interface OverloadResult {
  connectMaxRps: number;
  /** The quiet-day cost: connect's closed-loop maximum with lanes on and off, rounds interleaved (best of each). */
  quietConnect: { onRps: number[]; offRps: number[]; ratio: number };
  agentRate: number;
  socMaxRps: number;
  socRate: number;
  socUnloaded: OpenLoopResult;
  agentsAlone: OpenLoopResult;
  together: { agents: OpenLoopResult; soc: OpenLoopResult; lanesAfter: string; cpu: CpuShare[] };
  /** The same overload against the service with ECS_ADMISSION=false (one queue, as main). */
  withoutLanes: { agents: OpenLoopResult; soc: OpenLoopResult; cpu: CpuShare[] };
  flood: {
    /** Gets on the tokens index during the flood: the store work unknown tokens cause. */
    protectedTokenLookups: number;
    unprotectedTokenLookups: number;
    protectedEsCpuS: number;
    unprotectedEsCpuS: number;
    ratio: number;
    floodRps: number;
    unprotectedFloodRps: number;
    agentsProtected: OpenLoopResult;
    agentsUnprotected: OpenLoopResult;
  };
  targets: { name: string; value: string; met: boolean }[];
}

/**
 * Where the machine's CPU went during one overloaded round, in cores (CPU seconds ÷ wall
 * seconds): the service under test, Elasticsearch, and the bench process (both load generators,
 * the SOC worker thread included). On two cores, their sum near 2 means the box is saturated.
 */
export interface CpuShare {
  service: number;
  elasticsearch: number;
  generators: number;
}

async function measuringCpu<T>(servicePid: number, esPid: number | undefined, work: () => Promise<T>): Promise<[T, CpuShare]> {
  const t0 = performance.now();
  const svc0 = cpuSeconds(servicePid) ?? NaN;
  const es0 = cpuSeconds(esPid) ?? NaN;
  const gen0 = process.cpuUsage();
  const out = await work();
  const wall = (performance.now() - t0) / 1000;
  const gen = process.cpuUsage(gen0);
  const cores = (x: number): number => Math.round((x / wall) * 100) / 100;
  return [
    out,
    {
      service: cores((cpuSeconds(servicePid) ?? NaN) - svc0),
      elasticsearch: cores((cpuSeconds(esPid) ?? NaN) - es0),
      generators: cores((gen.user + gen.system) / 1e6),
    },
  ];
}

/** The SOC flood's in-flight cap (see the overload phases). */
const SOC_IN_FLIGHT = 2048;

/** Closed-loop maximum: 64 connections for `seconds`; successful (and all) answers per second. */
async function closedLoop(url: string, seconds: number, requests: autocannon.Request[], token: string): Promise<{ ok: number; all: number }> {
  const res = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      { url, connections: 64, pipelining: 1, duration: seconds, requests, headers: { 'x-auth-token': token, 'content-type': 'application/json' } },
      (err, r) => (err ? reject(err) : resolve(r)),
    ),
  );
  return { ok: (res.requests.total - res.non2xx - res.errors) / res.duration, all: res.requests.total / res.duration };
}

async function mint(url: string, admin: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${url}${API}/admin/tokens`, {
    method: 'POST',
    headers: { 'x-auth-token': admin, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-${crypto.randomBytes(3).toString('hex')}`, ...body }),
  });
  if (res.status !== 201) throw new Error(`minting a token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

async function lanes(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('ecs_admission_'))
    .join('; ');
}

export async function overloadBench(opts: {
  client: Client;
  prefix: string;
  runtime: Runtime;
  serviceEnv: Record<string, string>;
  admin: string;
  esPid: number | undefined;
  root: string;
  agentIds: string[];
  quick: boolean;
  log: (l: string) => void;
}): Promise<OverloadResult> {
  const { admin, root, agentIds, log } = opts;
  // The overload is measured against a service with the lanes on (their default,
  // docs/adr/0030-shedding-at-the-door.md) and compared with the same load on one without
  // (ECS_ADMISSION=false).
  const svc = await startService({ runtime: opts.runtime, env: { ...opts.serviceEnv, ECS_ADMISSION: 'true' } });
  const noLanes = await startService({ runtime: opts.runtime, env: { ...opts.serviceEnv, ECS_ADMISSION: 'false' } });
  try {
  const S = opts.quick ? 6 : 12;
  // Agents' requests spread over 16 tokens (real agents each have their own): one token for all
  // would make every shed agent request the caller's excess (429).
  const agentTokens: string[] = [];
  for (let i = 0; i < 16; i++) agentTokens.push(await mint(svc.url, admin, { role: 'system' }));
  const soc: string[] = [];
  for (let i = 0; i < 8; i++) soc.push(await mint(svc.url, admin, { role: 'reader', orgId: root }));
  const connect = (i: number): Req => ({
    method: 'POST',
    path: `${API}/endpoint/${agentIds[(i * 7919) % agentIds.length]}/connect`,
    token: agentTokens[i % agentTokens.length],
  });
  const search = JSON.stringify({ criteria: { orgId: root }, pageRequest: { page: 2, size: 100, sort: [{ field: 'hostInfo.hostName', direction: 'DESC' }] } });
  const aggregation = JSON.stringify({ orgId: root, includeChildren: true });
  const socReq = (i: number): Req =>
    i % 2 === 0
      ? { method: 'POST', path: `${API}/endpoint/page-search`, token: soc[i % soc.length], body: search }
      : { method: 'POST', path: `${API}/utm-endpoint/model/aggregation`, token: soc[i % soc.length], body: aggregation };

  let n = 0;
  const connectMax = async (url: string): Promise<number> =>
    (
      await closedLoop(
        url,
        S,
        [
          {
            method: 'POST',
            setupRequest: (r) => {
              const q = connect(n++);
              return { ...r, path: q.path, headers: { ...r.headers, 'x-auth-token': q.token } };
            },
          },
        ],
        agentTokens[0],
      )
    ).ok;
  // The quiet-day cost of the lanes: connect alone at 64 connections, lanes on and off, interleaved.
  const onRps: number[] = [];
  const offRps: number[] = [];
  for (let round = 0; round < 2; round++) {
    onRps.push(await connectMax(svc.url));
    offRps.push(await connectMax(noLanes.url));
  }
  const connectMaxRps = Math.max(...onRps);
  const quietConnect = { onRps, offRps, ratio: connectMaxRps / Math.max(1, ...offRps) };
  log(`overload: quiet connect max, lanes on ${onRps.map((x) => x.toFixed(0)).join(', ')}/s, off ${offRps.map((x) => x.toFixed(0)).join(', ')}/s (ratio ${quietConnect.ratio.toFixed(2)})`);
  const agentRate = Math.max(1, Math.round(connectMaxRps * 0.3));
  let m = 0;
  // Measured on the service without lanes: the SOC's capacity, not whatever the lanes' settings admit.
  const socMaxRps = (
    await closedLoop(
      noLanes.url,
      S,
      [
        {
          method: 'POST',
          setupRequest: (r) => {
            const q = socReq(m++);
            return { ...r, path: q.path, body: q.body, headers: { ...r.headers, 'x-auth-token': q.token } };
          },
        },
      ],
      soc[0],
    )
  ).ok;
  const socRate = Math.max(1, Math.round(socMaxRps * 3));
  log(`overload: connect max ${connectMaxRps.toFixed(0)}/s → agents at ${agentRate}/s; SOC max ${socMaxRps.toFixed(0)}/s → offered at ${socRate}/s`);

  // Unloaded SOC tail: a quarter of their maximum, nothing else running.
  const socUnloaded = summary(await openLoop(svc.url, Math.max(1, Math.round(socMaxRps / 4)), S, 64, socReq));
  // Two rounds of each, lanes on and off alternating (the shared machine's load drifts from one
  // minute to the next); each figure pools its rounds. The SOC flood runs on a worker thread, so
  // that its thousands of answers a second do not delay the loop that times the agents.
  const socList = Array.from({ length: 16 }, (_, i) => socReq(i));
  const alone: OpenLoopResult[] = [];
  const on: OpenLoopResult[][] = [];
  const off: OpenLoopResult[][] = [];
  let lanesAfter = '';
  // The SOC generator may hold up to 2,048 requests in flight: with 256, a service that queued
  // instead of shedding (lanes off) capped its own offered load (half the offer was never sent).
  const onCpu: CpuShare[] = [];
  const offCpu: CpuShare[] = [];
  const overloaded = async (target: { url: string; pid: number }, cpu: CpuShare[]): Promise<OpenLoopResult[]> => {
    const [out, share] = await measuringCpu(target.pid, opts.esPid, () =>
      Promise.all([openLoop(target.url, agentRate, S, 256, connect), openLoopInWorker(target.url, socRate, S, SOC_IN_FLIGHT, socList)]),
    );
    cpu.push(share);
    return out;
  };
  for (let round = 0; round < 2; round++) {
    alone.push(await openLoop(svc.url, agentRate, S, 256, connect));
    if (round === 1) off.push(await overloaded(noLanes, offCpu));
    on.push(await overloaded(svc, onCpu));
    lanesAfter = await lanes(svc.url);
    if (round === 0) off.push(await overloaded(noLanes, offCpu));
    log(
      `overload round ${round + 1}: agents alone p99 ${alone[round].okP99} ms; with SOC, lanes on p99 ${on[round][0].okP99} ms (served ${(on[round][0].servedRatio * 100).toFixed(1)} %; cores ${JSON.stringify(onCpu[round])}), ` +
        `lanes off p99 ${off[round][0].okP99} ms (served ${(off[round][0].servedRatio * 100).toFixed(1)} %; cores ${JSON.stringify(offCpu[round])})`,
    );
  }
  await noLanes.stop();
  const agentsAlone = pool(alone);
  const agents = pool(on.map((r) => r[0]));
  const socLoaded = pool(on.map((r) => r[1]));
  const withoutLanes: OverloadResult['withoutLanes'] = { agents: pool(off.map((r) => r[0])), soc: pool(off.map((r) => r[1])), cpu: offCpu };
  log(`overload: agents alone p99 ${agentsAlone.okP99} ms; with SOC p99 ${agents.okP99} ms, served ${(agents.servedRatio * 100).toFixed(1)} %; lanes off p99 ${withoutLanes.agents.okP99} ms, served ${(withoutLanes.agents.servedRatio * 100).toFixed(1)} %`);

  // Bogus-token flood at the maximum rate (64 connections, a new token each request).
  const tokenGets = async (): Promise<number> => {
    const res = await opts.client.indices.stats({ index: aliasName(opts.prefix, 'tokens'), metric: ['get'] });
    return res._all.total?.get?.total ?? NaN;
  };
  const flood = async (url: string): Promise<{ esCpuS: number; lookups: number; floodRps: number; agents: OpenLoopResult }> => {
    const gets = await tokenGets();
    const before = cpuSeconds(opts.esPid);
    const bogus = (): string => `ecs_${crypto.randomBytes(32).toString('base64url')}`;
    const [rps, ag] = await Promise.all([
      closedLoop(url, S, [{ method: 'GET', path: `${API}/endpoint/${agentIds[0]}`, setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'x-auth-token': bogus() } }) }], bogus()),
      openLoop(url, agentRate, S, 256, connect),
    ]);
    const after = cpuSeconds(opts.esPid);
    // Every flood answer is a 401 or 429: its rate is all answers.
    return { esCpuS: before === undefined || after === undefined ? NaN : after - before, lookups: (await tokenGets()) - gets, floodRps: rps.all, agents: summary(ag) };
  };
  const prot = await flood(svc.url);
  const unprotectedSvc = await startService({
    runtime: opts.runtime,
    env: { ...opts.serviceEnv, ECS_TOKEN_NEGATIVE_CACHE_SECONDS: '0', ECS_AUTH_FAILURES_PER_MINUTE: '0' },
  });
  let unprot: Awaited<ReturnType<typeof flood>>;
  try {
    unprot = await flood(unprotectedSvc.url);
  } finally {
    await unprotectedSvc.stop();
  }
  // Per flood request, so a slower unprotected service (it waits on the store) is not favoured.
  const ratio = prot.lookups / prot.floodRps / (unprot.lookups / unprot.floodRps);
  log(
    `overload: bogus-token flood: ${prot.lookups} token lookups at ${prot.floodRps.toFixed(0)}/s vs ${unprot.lookups} at ${unprot.floodRps.toFixed(0)}/s unprotected ` +
      `(${(ratio * 100).toFixed(2)} % per request); ES CPU ${prot.esCpuS.toFixed(2)} s vs ${unprot.esCpuS.toFixed(2)} s (whole node, shared)`,
  );

  const targets = [
    { name: 'quiet day: connect maximum with lanes ≥ 0.95 × without', value: `${connectMaxRps.toFixed(0)} vs ${Math.max(...offRps).toFixed(0)}/s (×${quietConnect.ratio.toFixed(2)})`, met: quietConnect.ratio >= 0.95 },
    { name: 'agents connect p99 under overload ≤ 2 × alone', value: `${agents.okP99} vs ${agentsAlone.okP99} ms (×${(agents.okP99 / agentsAlone.okP99).toFixed(2)})`, met: agents.okP99 <= 2 * agentsAlone.okP99 },
    { name: 'agents served ≥ 99 % of offered under overload', value: `${(agents.servedRatio * 100).toFixed(1)} %`, met: agents.servedRatio >= 0.99 },
    { name: 'shed SOC requests answered p99 ≤ 50 ms', value: `${socLoaded.shedP99} ms (${socLoaded.shed} shed)`, met: socLoaded.shedP99 <= 50 },
    { name: 'admitted SOC p99 ≤ 2 × unloaded p99', value: `${socLoaded.okP99} vs ${socUnloaded.okP99} ms (${socLoaded.ok} admitted)`, met: socLoaded.okP99 <= 2 * socUnloaded.okP99 },
    { name: 'bogus-token flood: store lookups per request ≤ 5 % of unprotected', value: `${(ratio * 100).toFixed(2)} %`, met: ratio <= 0.05 },
    { name: 'agents keep their rate during the flood (≥ 99 %)', value: `${(prot.agents.servedRatio * 100).toFixed(1)} %`, met: prot.agents.servedRatio >= 0.99 },
  ];
  return {
    connectMaxRps,
    quietConnect,
    agentRate,
    socMaxRps,
    socRate,
    socUnloaded,
    agentsAlone,
    together: { agents, soc: socLoaded, lanesAfter, cpu: onCpu },
    withoutLanes,
    flood: {
      protectedTokenLookups: prot.lookups,
      unprotectedTokenLookups: unprot.lookups,
      protectedEsCpuS: prot.esCpuS,
      unprotectedEsCpuS: unprot.esCpuS,
      ratio,
      floodRps: prot.floodRps,
      unprotectedFloodRps: unprot.floodRps,
      agentsProtected: prot.agents,
      agentsUnprotected: unprot.agents,
    },
    targets,
  };
  } finally {
    await svc.stop();
    await noLanes.stop();
  }
}

const cpuText = (c: CpuShare): string => `${c.service} / ${c.elasticsearch} / ${c.generators}`;

/** Markdown: the phases and the targets. */
export function overloadTable(r: OverloadResult): string {
  const row = (name: string, x: OpenLoopResult): string =>
    `| ${name} | ${x.offered} | ${x.ok} | ${x.shed} | ${x.notSent + x.other} | ${(x.servedRatio * 100).toFixed(1)} % | ${x.okP50} / ${x.okP99} | ${x.shed ? x.shedP99 : '-'} |`;
  return [
    `Connect maximum (closed loop, 64 connections) with lanes ${r.quietConnect.onRps.map((x) => x.toFixed(0)).join(' / ')}/s, without ${r.quietConnect.offRps.map((x) => x.toFixed(0)).join(' / ')}/s (rounds interleaved; best ratio ${r.quietConnect.ratio.toFixed(2)}).`,
    '',
    `Connect maximum ${r.connectMaxRps.toFixed(0)}/s → agents offered ${r.agentRate}/s; SOC maximum ${r.socMaxRps.toFixed(0)}/s → offered ${r.socRate}/s.`,
    '',
    'Agents alone and both overload phases pool two rounds each, lanes on and off alternating; the SOC flood is driven from a worker thread.',
    '',
    '| phase | offered | 2xx | shed (429/503) | other / not sent | served | 2xx p50 / p99 ms | shed p99 ms |',
    '|---|---|---|---|---|---|---|---|',
    row('SOC alone (¼ of max)', r.socUnloaded),
    row('agents alone', r.agentsAlone),
    row('agents, with SOC at 3 × max', r.together.agents),
    row('SOC at 3 × max', r.together.soc),
    row('agents, with SOC at 3 × max, lanes off (ECS_ADMISSION=false)', r.withoutLanes.agents),
    row('SOC at 3 × max, lanes off', r.withoutLanes.soc),
    row('agents during the bogus-token flood', r.flood.agentsProtected),
    row('agents during the flood, protections off', r.flood.agentsUnprotected),
    '',
    `Bogus-token flood: ${r.flood.floodRps.toFixed(0)} answers/s, ${r.flood.protectedTokenLookups} token lookups reached Elasticsearch; with the protections off ` +
      `${r.flood.unprotectedFloodRps.toFixed(0)} answers/s, ${r.flood.unprotectedTokenLookups} lookups. Elasticsearch CPU over the round (the whole node, agents' load and other users included): ` +
      `${r.flood.protectedEsCpuS.toFixed(2)} s against ${r.flood.unprotectedEsCpuS.toFixed(2)} s.`,
    '',
    `CPU during the overloaded rounds, in cores (service / Elasticsearch / the bench's generators): lanes on ${r.together.cpu.map(cpuText).join(', ')}; lanes off ${r.withoutLanes.cpu.map(cpuText).join(', ')}.`,
    '',
    '| target | measured | met |',
    '|---|---|---|',
    ...r.targets.map((t) => `| ${t.name} | ${t.value} | ${t.met ? 'yes' : 'no'} |`),
  ].join('\n');
}
