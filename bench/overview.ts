/**
 * The console's first screen: the fleet overview of a root's whole subtree (an MSP's, the distributor's),
 * its requests issued together, as a viewer's browser would, by several viewers at once.
 *
 * One overview = counts of UTM endpoints by connection status, agents by OS, UTM endpoints by
 * model, the LTE data usage, active licenses, the software titles with the most hosts and the
 * first page of endpoints — each viewer with an admin token of the root MSP of its own (eight
 * analysts, not one token eight times), so each is scoped to its subtree by the service's own
 * access rules. Its latency is the time until the last of its
 * requests has answered. No direct equivalent: the overview's value is the service's scoping
 * and mapping of eight different operations; each one's direct cost is in the scenarios above.
 */
import { percentile } from './direct.js';
import { API } from './scenario.js';
import type { TargetResult } from './report.js';

export interface OverviewResult {
  viewers: number;
  requestsPerOverview: number;
  overviews: number;
  overviewsPerSecond: number;
  /** Overview latency (ms): until the last of its requests answered. */
  p50: number;
  p99: number;
  max: number;
  /** Requests not answered 200, by `METHOD path status`. */
  errors: Record<string, number>;
}

export interface OverviewBenchOptions {
  serviceUrl: string;
  /** A system token (to mint the root MSP's admin token). */
  adminToken: string;
  root: string;
  viewers: number;
  roundS: number;
  warmupS: number;
  log: (line: string) => void;
}

interface OverviewRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

/** The overview's requests for the subtree of `root`. */
export function overviewRequests(root: string): OverviewRequest[] {
  const utm = { orgId: root, includeChildren: true };
  return [
    { method: 'POST', path: '/utm-endpoint/count', body: { ...utm, connectionStatuses: ['CONNECTED'] } },
    { method: 'POST', path: '/utm-endpoint/count', body: { ...utm, connectionStatuses: ['DISCONNECTED'] } },
    { method: 'POST', path: '/report/host-info/aggregation', body: { column: 'os' } },
    { method: 'POST', path: '/utm-endpoint/model/aggregation', body: utm },
    { method: 'GET', path: '/lte-endpoint/data-usage-sum' },
    { method: 'POST', path: '/license/count', body: { state: 'ACTIVATED' } },
    {
      method: 'POST',
      path: `/org/${root}/software-inventory-summary/search-page`,
      body: { criteria: {}, pageRequest: { page: 0, size: 10, sort: [{ field: 'count', direction: 'DESC' }] } },
    },
    { method: 'POST', path: '/endpoint/page-search', body: { criteria: {}, pageRequest: { page: 0, size: 20 } } },
  ];
}

async function mintRootAdmin(o: OverviewBenchOptions, viewer: number): Promise<string> {
  const res = await fetch(`${o.serviceUrl}${API}/admin/tokens`, {
    method: 'POST',
    headers: { 'x-auth-token': o.adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-overview-${viewer}`, role: 'admin', orgId: o.root }),
  });
  if (res.status !== 201) throw new Error(`minting the overview token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Runs `viewers` viewers loading overviews back to back: a warm-up, then one measured round. */
export async function overviewBench(o: OverviewBenchOptions): Promise<OverviewResult> {
  const tokens: string[] = [];
  for (let v = 0; v < o.viewers; v++) tokens.push(await mintRootAdmin(o, v));
  const requests = overviewRequests(o.root);
  const errors: Record<string, number> = {};

  const one = async (r: OverviewRequest, token: string): Promise<void> => {
    const res = await fetch(`${o.serviceUrl}${API}${r.path}`, {
      method: r.method,
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) {
      const k = `${r.method} ${r.path.replace(o.root, '{root}')} ${res.status}`;
      errors[k] = (errors[k] ?? 0) + 1;
    }
  };
  const overview = async (token: string): Promise<number> => {
    const started = performance.now();
    await Promise.all(requests.map((r) => one(r, token)));
    return performance.now() - started;
  };
  const round = async (seconds: number): Promise<number[]> => {
    const until = performance.now() + seconds * 1000;
    const latencies: number[] = [];
    await Promise.all(
      tokens.map(async (token) => {
        while (performance.now() < until) latencies.push(await overview(token));
      }),
    );
    return latencies.sort((a, b) => a - b);
  };

  await round(o.warmupS);
  for (const k of Object.keys(errors)) delete errors[k];
  const latencies = await round(o.roundS);
  const result: OverviewResult = {
    viewers: o.viewers,
    requestsPerOverview: requests.length,
    overviews: latencies.length,
    overviewsPerSecond: latencies.length / o.roundS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
    errors,
  };
  o.log(
    `overview: ${o.viewers} viewers, ${result.overviews} overviews of ${requests.length} requests in ${o.roundS} s; p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms; errors ${JSON.stringify(errors)}`,
  );
  return result;
}

export function overviewTable(r: OverviewResult): string {
  return [
    `| overview (${r.viewers} viewers, ${r.requestsPerOverview} requests each) | overviews/s | p50 ms | p99 ms | max ms | requests not 200 |`,
    '|---|---|---|---|---|---|',
    `| service | ${r.overviewsPerSecond.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${Object.values(r.errors).reduce((a, b) => a + b, 0)} |`,
  ].join('\n');
}

/** The overview's targets; `whose` names the viewers' organization ('' for the root MSP's, 'distributor ' with a 300 ms bound). */
export function overviewTargets(r: OverviewResult, whose = ''): TargetResult[] {
  const failed = Object.values(r.errors).reduce((a, b) => a + b, 0);
  const bound = whose ? 300 : 150;
  return [
    { target: `${whose}overview: p99 ≤ ${bound} ms at ${r.viewers} concurrent viewers`, measured: `${r.p99.toFixed(1)} ms`, met: r.p99 <= bound && failed === 0 },
    { target: `${whose}overview: every request answered 200`, measured: failed === 0 ? 'all' : JSON.stringify(r.errors), met: failed === 0 },
  ];
}
