/** Results of a run as markdown tables, and the targets evaluated against them. */
import type { RoundResult } from './direct.js';
import type { MigrationResult } from './migration.js';
import { spread, type Quietness } from './quiet.js';

export interface ServiceRound extends RoundResult {
  cpuPercent: number;
  /** Service CPU per request (ms). */
  cpuMsPerRequest: number;
  /** Elasticsearch CPU per request (ms) while the service was driven; undefined when the node is not local. */
  esCpuMsPerRequest?: number;
  peakRssMb: number;
  /** Status and body of the first non-2xx answer of the round. */
  firstError?: string;
}

export interface ScenarioResult {
  name: string;
  /** The service's memory after the scenario (its /metrics): RSS, V8 heap total and used, external. */
  memory: Record<string, number>;
  serviceWork: string;
  directWork: string;
  service: ServiceRound;
  serviceRounds: number[];
  direct: RoundResult & { esCpuMsPerRequest?: number };
  directRounds: number[];
  ratio: number;
  at70: { rate: number; rps: number; p50: number; p99: number; errors: number };
  /**
   * During the 70 % round: the service's event-loop delay (p99, max; 10 ms timer resolution
   * included) and GC time by kind; Elasticsearch's JVM GC, refreshes, merges, indexing time.
   */
  at70Diagnostics?: { service: Record<string, number>; elasticsearch: Record<string, number> };
  /** The direct equivalent driven at the same rate (its tail is the floor's). */
  at70Direct: { rps: number; p50: number; p99: number; errors: number };
  /**
   * The bare hop (bench/hop-server.ts): the direct equivalent behind a plain node:http server
   * at the same concurrency, its best round (rounds alternate with the service's); its CPU and
   * Elasticsearch's per request.
   */
  hop?: RoundResult & { cpuMsPerRequest?: number; esCpuMsPerRequest?: number };
  /** Requests/s of each hop round, in order. */
  hopRounds?: number[];
  /** How alone the scenario ran (bench/quiet.ts); `void` ratios are a direction, not a result. */
  quiet?: Quietness;
  /** Writes made beside the scenario while it was measured (a scenario with background work). */
  backgroundWrites?: number;
  /** The bare hop driven at the service's 70 % rate. */
  at70Hop?: { rps: number; p50: number; p99: number; errors: number };
}

export interface TargetResult {
  target: string;
  measured: string;
  met: boolean;
}

/** service ÷ hop, or why there is no such figure. */
function hopRatio(r: ScenarioResult): string {
  if (!r.hop) return '-';
  const ratio = f2(r.service.rps / Math.max(1, r.hop.rps));
  return r.quiet?.void ? `void (${ratio}; others used ${f0(r.quiet.othersCpuPercent)} % of a core)` : ratio;
}

const f0 = (n: number | undefined): string => (n === undefined ? '-' : n.toFixed(0));
const f2 = (n: number | undefined): string => (n === undefined ? '-' : n.toFixed(2));
const f3 = (n: number | undefined): string => (n === undefined ? '-' : n.toFixed(3));

export function evaluateTargets(results: ScenarioResult[], migration: MigrationResult | undefined, servicePeakRssMb: number | undefined): TargetResult[] {
  const out: TargetResult[] = [];
  const by = (prefix: string): ScenarioResult | undefined => results.find((r) => r.name.startsWith(prefix));
  for (const [name, p99] of [
    ['connect', 25],
    ['get endpoint', 25],
    ['page-search', 50],
    ['UTM page-search', 50],
    ['UTM model aggregation', 50],
  ] as const) {
    const r = by(name);
    if (!r) continue;
    if (r.hop) {
      const ratio = r.service.rps / Math.max(1, r.hop.rps);
      out.push({ target: `${r.name}: service ≥ 0.95 × bare hop`, measured: hopRatio(r), met: !r.quiet?.void && ratio >= 0.95 });
    }
    if (r.direct.requests > 0) out.push({ target: `${r.name}: service ≥ 0.8 × direct at 64 connections`, measured: `${f0(r.service.rps)} / ${f0(r.direct.rps)} = ${f2(r.ratio)}`, met: r.ratio >= 0.8 });
    out.push({ target: `${r.name}: p99 ≤ ${p99} ms at 70 % of max`, measured: `${r.at70.p99} ms at ${r.at70.rate}/s`, met: r.at70.p99 <= p99 && r.at70.errors === 0 });
  }
  // The distributor's first page uncached (the hop sends it without the request cache), and the service's with a write every 100 ms clearing the cache.
  const first = results.find((r) => r.name === 'distributor page-search');
  if (first?.hop) {
    const es = first.hop.esCpuMsPerRequest;
    out.push({ target: 'distributor page-search uncached (the hop): ≤ 5 ms of Elasticsearch CPU a page', measured: `${f2(es)} ms`, met: es !== undefined && es <= 5 && !first.quiet?.void });
    out.push({ target: 'distributor page-search uncached (the hop): ≥ 500 pages/s', measured: `${f0(first.hop.rps)}/s`, met: first.hop.rps >= 500 && !first.quiet?.void });
  }
  const written = results.find((r) => r.name === 'distributor page-search, a write every 100 ms');
  if (written) {
    out.push({
      target: 'distributor page-search with a write every 100 ms: p99 ≤ 100 ms at 70 % of max',
      measured: `${written.at70.p99} ms at ${written.at70.rate}/s (${written.backgroundWrites ?? '?'} writes)`,
      met: written.at70.p99 <= 100 && written.at70.errors === 0,
    });
  }
  for (const inv of results.filter((r) => r.name.startsWith('software inventory'))) {
    out.push({ target: `${inv.name}: p99 ≤ 100 ms (at 70 % of max)`, measured: `${inv.at70.p99} ms at ${inv.at70.rate}/s (at max: ${inv.service.p99} ms)`, met: inv.at70.p99 <= 100 && inv.at70.errors === 0 });
  }
  if (migration) {
    const [n, n5] = migration.runs;
    const slow = Math.min(n.migrate.recordsPerSecond, n5.migrate.recordsPerSecond);
    out.push({ target: 'migration ≥ 10,000 records/s (N and 5N)', measured: `${f0(n.migrate.recordsPerSecond)} and ${f0(n5.migrate.recordsPerSecond)}`, met: slow >= 10_000 });
    out.push({
      target: 'migration ≥ 0.5 × direct (scan + COPY of the same rows)',
      measured: `${f2(n.ratioToScanCopy)} and ${f2(n5.ratioToScanCopy)}`,
      met: Math.min(n.ratioToScanCopy, n5.ratioToScanCopy) >= 0.5,
    });
    out.push({
      target: 'migration ≥ 0.5 × direct (COPY only of the same rows)',
      measured: `${f2(n.ratioToCopyOnly)} and ${f2(n5.ratioToCopyOnly)}`,
      met: Math.min(n.ratioToCopyOnly, n5.ratioToCopyOnly) >= 0.5,
    });
    out.push({
      target: 'migration peak RSS at 5N ≤ 1.2 × at N',
      measured: `${f0(n5.migrate.peakRssMb)} / ${f0(n.migrate.peakRssMb)} MB = ${f2(migration.rssRatio)}`,
      met: migration.rssRatio <= 1.2,
    });
  }
  if (servicePeakRssMb !== undefined) {
    out.push({ target: "service's RSS ≤ 250 MB throughout (peak over the run)", measured: `${f0(servicePeakRssMb)} MB`, met: servicePeakRssMb <= 250 });
  }
  if (migration) {
    const peak = Math.max(...migration.runs.map((r) => r.migrate.peakRssMb));
    out.push({ target: 'migration process RSS ≤ 250 MB', measured: `${f0(peak)} MB`, met: peak <= 250 });
  }
  return out;
}

export function resultsTable(results: ScenarioResult[], migration: MigrationResult | undefined): string {
  const lines: string[] = [];
  if (results.length > 0) {
    lines.push(
      '| scenario | service rps | direct rps | ratio | service p50 / p99 ms | direct p50 / p99 ms | at 70 % of max: rate, service p99 / hop p99 / direct p99 ms | service CPU ms/req | ES CPU ms/req service / direct | service peak RSS MB | bare hop rps (÷ direct) | hop CPU ms/req | service ÷ hop | rounds rps, service / hop (min–max) | load at start → end, CPU % of other processes |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of results) {
      const hop = r.hop ? `${f0(r.hop.rps)} (${f2(r.hop.rps / Math.max(1, r.direct.rps))}) | ${f3(r.hop.cpuMsPerRequest)} | ${hopRatio(r)}` : '- | - | -';
      const q = r.quiet ? `${f2(r.quiet.loadAverageStart[0])} → ${f2(r.quiet.loadAverageEnd[0])}, ${f0(r.quiet.othersCpuPercent)}` : '-';
      const rounds = `${spread(r.serviceRounds)} / ${spread(r.hopRounds ?? [])}`;
      lines.push(
        `| ${r.name} | ${f0(r.service.rps)} | ${f0(r.direct.rps)} | ${f2(r.ratio)} | ${r.service.p50} / ${r.service.p99} | ${f0(r.direct.p50)} / ${f0(r.direct.p99)} | ${r.at70.rate}/s: ${r.at70.p99} / ${r.at70Hop ? f0(r.at70Hop.p99) : '-'} / ${f0(r.at70Direct.p99)} | ${f3(r.service.cpuMsPerRequest)} | ${f3(r.service.esCpuMsPerRequest)} / ${f3(r.direct.esCpuMsPerRequest)} | ${f0(r.service.peakRssMb)} | ${hop} | ${rounds} | ${q} |`,
      );
    }
  }
  if (migration) {
    if (lines.length > 0) lines.push('');
    lines.push(
      `Migration (${migration.driver}: ${migration.postgres.split(' on ')[0]}, schema ${migration.schema}):`,
      '',
      '| records | migrate records/s | seconds | peak RSS MB | ES CPU s | scan + COPY records/s | ratio | ES CPU s | COPY only records/s | ratio |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of migration.runs) {
      lines.push(
        `| ${r.records} | ${f0(r.migrate.recordsPerSecond)} | ${r.migrate.seconds.toFixed(1)} | ${f0(r.migrate.peakRssMb)} | ${r.migrate.esCpuSeconds?.toFixed(1) ?? '-'} | ${f0(r.scanCopy.recordsPerSecond)} | ${f2(r.ratioToScanCopy)} | ${r.scanCopy.esCpuSeconds?.toFixed(1) ?? '-'} | ${f0(r.copyOnly.recordsPerSecond)} | ${f2(r.ratioToCopyOnly)} |`,
      );
    }
  }
  return lines.join('\n');
}

export function targetsTable(targets: TargetResult[]): string {
  return ['| target | measured | |', '|---|---|---|', ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'met' : '**not met**'} |`)].join('\n');
}
