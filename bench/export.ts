/**
 * The export scenario: every agent of the data set (100,000; `--quick` 10,000)
 * exported in one response, NDJSON and CSV, with a system token, then the root MSP's subtree
 * with an admin token of its own (the service's scoping). The client counts records as they
 * stream and keeps nothing, so the figures are the service's: records/s, time to the first
 * byte, bytes, and the service's RSS before and at its peak while streaming (sampled every
 * 50 ms). The floor beside it: the same point-in-time + search_after scan issued directly by
 * this process (batches of 1,000, the export's), in records/s — on a shared machine compare
 * the ratio, not the absolute numbers.
 */
import type { Client } from '@elastic/elasticsearch';
import { API } from './scenario.js';
import { sample, watchRss } from './proc.js';
import type { TargetResult } from './report.js';

export interface ExportRun {
  name: string;
  format: 'ndjson' | 'csv';
  records: number;
  expected: number;
  bytes: number;
  seconds: number;
  recordsPerSecond: number;
  firstByteMs: number;
  rssBeforeMb: number;
  peakRssMb: number;
}

export interface ExportResult {
  runs: ExportRun[];
  direct: { records: number; seconds: number; recordsPerSecond: number };
}

export interface ExportBenchOptions {
  client: Client;
  prefix: string;
  serviceUrl: string;
  servicePid: number;
  adminToken: string;
  root: string;
  log: (line: string) => void;
}

async function mintRootAdmin(o: ExportBenchOptions): Promise<string> {
  const res = await fetch(`${o.serviceUrl}${API}/admin/tokens`, {
    method: 'POST',
    headers: { 'x-auth-token': o.adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench-export', role: 'admin', orgId: o.root }),
  });
  if (res.status !== 201) throw new Error(`minting the export token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** The totalCount of the export's search (empty criteria) under `token`: the records it should stream. */
async function matchingAgents(o: ExportBenchOptions, token: string): Promise<number> {
  const res = await fetch(`${o.serviceUrl}${API}/endpoint/page-search`, {
    method: 'POST',
    headers: { 'x-auth-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ criteria: {}, pageRequest: { page: 0, size: 1 } }),
  });
  if (res.status !== 200) throw new Error(`counting the export's records: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { totalCount: number }).totalCount;
}

/** One export, streamed and counted (a record per line; CSV less its header row). */
async function runExport(
  o: ExportBenchOptions,
  name: string,
  token: string,
  format: 'ndjson' | 'csv',
  expected: number,
): Promise<ExportRun> {
  global.gc?.();
  const rssBeforeMb = sample(o.servicePid).rssMb;
  const rss = watchRss(o.servicePid, 50);
  const t0 = performance.now();
  const res = await fetch(`${o.serviceUrl}${API}/endpoint/page-search/export`, {
    method: 'POST',
    headers: {
      'x-auth-token': token,
      'content-type': 'application/json',
      accept: format === 'csv' ? 'text/csv' : 'application/x-ndjson',
    },
    body: JSON.stringify({ criteria: {} }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`export ${name}: ${res.status} ${await res.text()}`);
  let firstByteMs = 0;
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (bytes === 0) firstByteMs = performance.now() - t0;
    bytes += chunk.byteLength;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const peakRssMb = Math.max(rss.stop(), rssBeforeMb);
  // A CSV record may hold a quoted line break; the seeded agents have none, so lines count records.
  const records = format === 'csv' ? lines - 1 : lines;
  const run = {
    name,
    format,
    records,
    expected,
    bytes,
    seconds,
    recordsPerSecond: records / seconds,
    firstByteMs,
    rssBeforeMb,
    peakRssMb,
  };
  o.log(
    `export ${name} (${format}): ${records} of ${expected} records, ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s = ` +
      `${run.recordsPerSecond.toFixed(0)} records/s; first byte ${firstByteMs.toFixed(0)} ms; service RSS ${rssBeforeMb.toFixed(0)} → peak ${peakRssMb.toFixed(0)} MB`,
  );
  return run;
}

/** The floor: the same scan straight from Elasticsearch (PIT + search_after, batches of 1,000). */
async function directScan(o: ExportBenchOptions): Promise<ExportResult['direct']> {
  const index = `${o.prefix}-endpoints`;
  const t0 = performance.now();
  const pit = await o.client.openPointInTime({ index, keep_alive: '1m' });
  let pitId = pit.id;
  let records = 0;
  let after: (string | number | boolean | null)[] | undefined;
  try {
    for (;;) {
      const res = await o.client.search({
        pit: { id: pitId, keep_alive: '1m' },
        size: 1000,
        query: {
          bool: {
            filter: [{ terms: { type: ['VC_ENDPOINT', 'VC_SCANNER'] } }],
            must_not: [{ term: { deleted: true } }],
          },
        },
        sort: [{ id: 'asc' }],
        track_total_hits: false,
        seq_no_primary_term: true,
        version: true,
        ...(after ? { search_after: after } : {}),
      });
      pitId = res.pit_id ?? pitId;
      const hits = res.hits.hits;
      records += hits.length;
      if (hits.length < 1000) break;
      after = hits[hits.length - 1].sort as (string | number | boolean | null)[];
    }
  } finally {
    await o.client.closePointInTime({ id: pitId }).catch(() => undefined);
  }
  const seconds = (performance.now() - t0) / 1000;
  o.log(
    `export direct scan: ${records} records in ${seconds.toFixed(1)} s = ${(records / seconds).toFixed(0)} records/s`,
  );
  return { records, seconds, recordsPerSecond: records / seconds };
}

export async function exportBench(o: ExportBenchOptions): Promise<ExportResult> {
  const rootToken = await mintRootAdmin(o);
  const runs: ExportRun[] = [];
  const direct = await directScan(o);
  // What should arrive is what matches now (the create scenarios add agents to the seeded ones):
  // all agents as the direct scan read them, and the subtree's as the page search counts them.
  const all = direct.records;
  const subtree = await matchingAgents(o, rootToken);
  runs.push(await runExport(o, 'all agents, system token', o.adminToken, 'ndjson', all));
  runs.push(await runExport(o, 'all agents, system token', o.adminToken, 'csv', all));
  runs.push(await runExport(o, "root MSP's subtree, its admin token", rootToken, 'ndjson', subtree));
  return { runs, direct };
}

export function exportTable(r: ExportResult): string {
  return [
    '| export | format | records | MB | s | records/s | ÷ direct scan | first byte ms | service RSS before → peak MB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.runs.map(
      (x) =>
        `| ${x.name} | ${x.format} | ${x.records} | ${(x.bytes / 1e6).toFixed(1)} | ${x.seconds.toFixed(1)} | ${x.recordsPerSecond.toFixed(0)} | ` +
        `${(x.recordsPerSecond / Math.max(1, r.direct.recordsPerSecond)).toFixed(2)} | ${x.firstByteMs.toFixed(0)} | ${x.rssBeforeMb.toFixed(0)} → ${x.peakRssMb.toFixed(0)} |`,
    ),
    `| direct scan (PIT + search_after from the bench) | – | ${r.direct.records} | – | ${r.direct.seconds.toFixed(1)} | ${r.direct.recordsPerSecond.toFixed(0)} | 1.00 | – | – |`,
  ].join('\n');
}

export function exportTargets(r: ExportResult): TargetResult[] {
  const complete = r.runs.every((x) => x.records === x.expected);
  const growth = Math.max(...r.runs.map((x) => x.peakRssMb - x.rssBeforeMb));
  return [
    {
      target: 'export: every matching record in one response',
      measured: complete ? 'all' : r.runs.map((x) => `${x.records}/${x.expected}`).join(', '),
      met: complete,
    },
    // Constant memory: the stream holds a batch or two (1,000 records, ~1 MB each), never the export.
    {
      target: 'export: service RSS grows ≤ 64 MB while streaming',
      measured: `${growth.toFixed(0)} MB`,
      met: growth <= 64,
    },
  ];
}
