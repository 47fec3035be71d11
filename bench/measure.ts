/** How the bench drives load and reads the processes it measures: autocannon, /metrics, Elasticsearch's counters. */
import autocannon from 'autocannon';
import type { Client } from '@elastic/elasticsearch';
import type { RoundResult } from './direct.js';
import type { Scenario } from './scenario.js';

/** autocannon at `connections` connections, no pipelining, for `seconds`. */
export function drive(
  url: string,
  connections: number,
  requests: autocannon.Request[],
  seconds: number,
  extra: Partial<autocannon.Options> = {},
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, pipelining: 1, duration: seconds, requests, ...extra }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Who the scenarios call as: the bootstrap admin, and the distributor's admin once minted. */
export interface Callers {
  admin: string;
  distributor?: string;
}

/** One scenario against the service for `seconds` (at `rate` overall when given), with its first error. */
export async function cannon(
  url: string,
  connections: number,
  callers: Callers,
  sc: Scenario,
  seconds: number,
  rate?: number,
): Promise<{ res: autocannon.Result; firstError?: string }> {
  let n = 0;
  let firstError: string | undefined;
  const req = sc.service(() => n++);
  req.onResponse = (status: number, body: string) => {
    if (status >= 300 && firstError === undefined) firstError = `${status} ${String(body).slice(0, 300)}`;
  };
  const res = await drive(url, connections, [req], seconds, {
    ...(rate ? { overallRate: rate } : {}),
    headers: { 'x-auth-token': sc.caller === 'distributor' ? (callers.distributor ?? callers.admin) : callers.admin, 'content-type': 'application/json' },
  });
  return { res, firstError };
}

/**
 * autocannon against the bare hop: request i of scenario k is `POST /k/i`, carrying the body the
 * service's request i carries (the hop receives and parses what the service does); with `rate`,
 * at that overall rate.
 */
export function cannonHop(url: string, connections: number, sc: Scenario, k: number, seconds: number, rate?: number): Promise<autocannon.Result> {
  let n = 0;
  // The service's request i, built as the service's rounds build it; `next()` answers i.
  const asService = sc.service(() => n);
  const setup = typeof asService.setupRequest === 'function' ? asService.setupRequest : undefined;
  const request: autocannon.Request = {
    method: 'POST',
    setupRequest: (r, context) => {
      const i = n;
      const built = setup ? setup({ ...r }, context) : r;
      n++;
      const body = built.body ?? asService.body;
      return { ...r, method: 'POST', path: `/${k}/${i}`, ...(body !== undefined ? { body } : {}) };
    },
  };
  return drive(url, connections, [request], seconds, rate ? { overallRate: rate } : {});
}

export function fromCannon(r: autocannon.Result): RoundResult {
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
export async function serviceMemory(url: string): Promise<Record<string, number>> {
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
export async function serviceMetrics(url: string): Promise<Record<string, number>> {
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
export async function esCounters(client: Client): Promise<Record<string, number>> {
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
export async function settle(client: Client, prefix: string, maxS = 90): Promise<number> {
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

export function delta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(b).map((k) => [k, Math.round((b[k] - (a[k] ?? 0)) * 10) / 10]));
}

/** CPU milliseconds a process spent per request over a round. */
export function msPerRequest(before: number | undefined, after: number | undefined, requests: number): number | undefined {
  return before === undefined || after === undefined || requests === 0 ? undefined : ((after - before) * 1000) / requests;
}

/** A token of `role` admin at `orgId`, minted through the service with the system token `admin`. */
export async function mintToken(url: string, admin: string, name: string, orgId: string): Promise<string> {
  const res = await fetch(`${url}/endpoint-control-service/v1/admin/tokens`, {
    method: 'POST',
    headers: { 'x-auth-token': admin, 'content-type': 'application/json' },
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
