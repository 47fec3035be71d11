/**
 * Creates that are searchable when they answer, measured against Elasticsearch's
 * own ways of giving the same guarantee:
 *
 * - create-sequential: one writer, `POST /endpoint` one after another: p50 and p99 (the cost of
 *   the visibility wait when nobody shares it; `refresh=wait_for` would be up to a second).
 * - create-concurrent: 64 writers, the service against the same document written directly with
 *   `index` + `refresh=wait_for` (the same guarantee) and with `index` + `refresh=true` (a
 *   forced refresh per write), with Elasticsearch's segment count and merge time over each round.
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import type { Client } from '@elastic/elasticsearch';
import { aliasName } from '../src/store/client.js';
import type { EndpointDoc } from '../src/resources/endpoints/model.js';
import { percentile, runDirect, type RoundResult } from './direct.js';
import { API } from './scenario.js';
import type { TargetResult } from './report.js';

export interface CreateRound extends RoundResult {
  /** Segments of the endpoints index (primaries) after the round. */
  segments: number;
  /** Merge time (ms) and refreshes of the endpoints index during the round. */
  mergeMs: number;
  refreshes: number;
}

export interface CreateResult {
  sequential: { requests: number; errors: number; p50: number; p99: number; max: number };
  concurrent: { service: CreateRound; directWaitFor: CreateRound; directRefresh: CreateRound; rounds: Record<string, number[]> };
}

export interface CreateBenchOptions {
  client: Client;
  prefix: string;
  serviceUrl: string;
  token: string;
  orgId: string;
  connections: number;
  roundS: number;
  rounds: number;
  /** Waits until Elasticsearch has no merge running (the run's `settle`). */
  settle: () => Promise<unknown>;
  log: (line: string) => void;
}

const body = (orgId: string): string => JSON.stringify({ orgId, displayName: `bench-create-${crypto.randomUUID()}` });

/** The document the service writes for that body (bench/scenarios.ts builds its direct work the same way). */
function endpointDoc(orgId: string): EndpointDoc {
  const now = new Date().toISOString();
  const by = { username: 'bench', authenticator: 'token' };
  return {
    id: crypto.randomUUID(),
    orgId,
    displayName: `bench-create-${crypto.randomUUID()}`,
    type: 'VC_ENDPOINT',
    connectionStatus: 'NEVER',
    deleted: false,
    createdAt: now,
    createdBy: by,
    updatedAt: now,
    updatedBy: by,
  } as EndpointDoc;
}

async function indexCounters(client: Client, index: string): Promise<{ segments: number; mergeMs: number; refreshes: number }> {
  const s = await client.indices.stats({ index, metric: ['segments', 'merge', 'refresh'] });
  const p = s._all.primaries;
  return { segments: p?.segments?.count ?? 0, mergeMs: p?.merges?.total_time_in_millis ?? 0, refreshes: p?.refresh?.total ?? 0 };
}

async function measured(client: Client, index: string, round: () => Promise<RoundResult>): Promise<CreateRound> {
  const before = await indexCounters(client, index);
  const r = await round();
  const after = await indexCounters(client, index);
  return { ...r, segments: after.segments, mergeMs: after.mergeMs - before.mergeMs, refreshes: after.refreshes - before.refreshes };
}

export async function createBench(o: CreateBenchOptions): Promise<CreateResult> {
  const index = aliasName(o.prefix, 'endpoints');
  const headers = { 'x-auth-token': o.token, 'content-type': 'application/json' };

  // Sequential: one writer, each create answered before the next is sent.
  await o.settle();
  const latencies: number[] = [];
  let seqErrors = 0;
  const deadline = performance.now() + o.roundS * 1000;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    const res = await fetch(`${o.serviceUrl}${API}/endpoint`, { method: 'POST', headers, body: body(o.orgId) });
    await res.arrayBuffer();
    if (res.status !== 200) seqErrors++;
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  const sequential = {
    requests: latencies.length,
    errors: seqErrors,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
  };
  o.log(`create-sequential: ${sequential.requests} creates, p50 ${sequential.p50.toFixed(1)} p99 ${sequential.p99.toFixed(1)} ms (errors ${seqErrors})`);

  const service = (): Promise<RoundResult> =>
    new Promise((resolve, reject) => {
      autocannon(
        {
          url: o.serviceUrl,
          connections: o.connections,
          pipelining: 1,
          duration: o.roundS,
          headers,
          requests: [{ method: 'POST', path: `${API}/endpoint`, setupRequest: (r) => ({ ...r, body: body(o.orgId) }) }],
        },
        (err, r) => {
          if (err) return reject(err);
          const ok = r.requests.total - r.non2xx - r.errors;
          resolve({ requests: r.requests.total, errors: r.non2xx + r.errors, durationS: r.duration, rps: ok / r.duration, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max });
        },
      );
    });
  const direct = (refresh: 'wait_for' | true) => (): Promise<RoundResult> =>
    runDirect(
      () => {
        const doc = endpointDoc(o.orgId);
        return o.client.index({ index, id: doc.id, document: doc, op_type: 'create', require_alias: true, refresh });
      },
      o.connections,
      o.roundS,
    );

  const kinds = { service, directWaitFor: direct('wait_for'), directRefresh: direct(true) } as const;
  const all: Record<keyof typeof kinds, CreateRound[]> = { service: [], directWaitFor: [], directRefresh: [] };
  for (let round = 0; round < o.rounds; round++) {
    for (const k of Object.keys(kinds) as (keyof typeof kinds)[]) {
      await o.settle();
      const r = await measured(o.client, index, kinds[k]);
      all[k].push(r);
      o.log(`create-concurrent ${k}: ${r.rps.toFixed(0)} creates/s p50 ${r.p50.toFixed(1)} p99 ${r.p99.toFixed(1)} ms (errors ${r.errors}); ${r.refreshes} refreshes, ${r.segments} segments after, ${r.mergeMs} ms of merges`);
    }
  }
  const best = (rs: CreateRound[]): CreateRound => rs.reduce((a, b) => (b.rps > a.rps ? b : a));
  return {
    sequential,
    concurrent: {
      service: best(all.service),
      directWaitFor: best(all.directWaitFor),
      directRefresh: best(all.directRefresh),
      rounds: Object.fromEntries(Object.entries(all).map(([k, rs]) => [k, rs.map((r) => Math.round(r.rps))])),
    },
  };
}

const f1 = (n: number): string => n.toFixed(1);

/** The markdown table of a create run. */
export function createTable(c: CreateResult): string {
  const row = (name: string, r: CreateRound): string =>
    `| ${name} | ${r.rps.toFixed(0)} | ${f1(r.p50)} / ${f1(r.p99)} | ${r.errors} | ${r.refreshes} | ${r.segments} | ${r.mergeMs} |`;
  return [
    `create-sequential (one writer): ${c.sequential.requests} creates, p50 ${f1(c.sequential.p50)} ms, p99 ${f1(c.sequential.p99)} ms, errors ${c.sequential.errors}`,
    '',
    '| create-concurrent (64 writers) | creates/s | p50 / p99 ms | errors | refreshes | segments after | merge ms |',
    '|---|---|---|---|---|---|---|',
    row('service (POST /endpoint, shared refresh)', c.concurrent.service),
    row('direct index, refresh=wait_for', c.concurrent.directWaitFor),
    row('direct index, refresh=true', c.concurrent.directRefresh),
  ].join('\n');
}

/** The targets of creates that are searchable when they answer. */
export function createTargets(c: CreateResult): TargetResult[] {
  const s = c.concurrent.service.rps;
  const w = c.concurrent.directWaitFor.rps;
  const t = c.concurrent.directRefresh.rps;
  return [
    { target: 'create-sequential: p50 ≤ 25 ms', measured: `${f1(c.sequential.p50)} ms`, met: c.sequential.p50 <= 25 },
    { target: 'create-sequential: p99 ≤ 60 ms', measured: `${f1(c.sequential.p99)} ms`, met: c.sequential.p99 <= 60 },
    { target: 'create-concurrent: ≥ 1.0 × direct refresh=wait_for', measured: `${s.toFixed(0)} / ${w.toFixed(0)} = ${(s / Math.max(1, w)).toFixed(2)}`, met: s >= w },
    { target: 'create-concurrent: ≥ 0.8 × direct refresh=true', measured: `${s.toFixed(0)} / ${t.toFixed(0)} = ${(s / Math.max(1, t)).toFixed(2)}`, met: s >= 0.8 * t },
  ];
}
