/**
 * `npm run bench -- tracing`: what OpenTelemetry traces cost (docs/adr/0090-opentelemetry-traces.md).
 * Up to three service processes run side by side against the same data set — traces off,
 * traces on at 10 % (`parentbased_traceidratio`, 0.1) sending OTLP/HTTP protobuf to a sink in
 * the bench process (a collector's receiver on the same host: it reads and counts every
 * export, decodes nothing), and, with BENCH_BEFORE_DIR, the service as it was before traces
 * (a dist/ built from that commit) — and are driven in alternating rounds, the order rotated
 * each round, so the load of a shared machine drifts over all of them alike. Each round's
 * figures are kept; the spread between rounds of one variant is the noise a difference must
 * beat.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type autocannon from 'autocannon';
import type { RoundResult } from './direct.js';
import { sample } from './proc.js';
import type { Scenario } from './scenario.js';
import { startService, type Runtime, type ServiceProcess } from './service-process.js';

export interface TracingRound extends RoundResult {
  variant: string;
  round: number;
  cpuMsPerRequest: number;
}

export interface TracingScenarioResult {
  name: string;
  rounds: TracingRound[];
  /** Per variant: the median of its rounds. */
  median: Record<string, { rps: number; p50: number; p99: number; cpuMsPerRequest: number }>;
  /** Per variant: lowest and highest requests/s of its rounds (the noise). */
  spread: Record<string, { min: number; max: number }>;
}

export interface TracingResult {
  variants: string[];
  sampler: string;
  sink: { exports: number; bytes: number };
  scenarios: TracingScenarioResult[];
}

interface Deps {
  runtime: Runtime;
  serviceEnv: Record<string, string>;
  scenarios: Scenario[];
  rounds: number;
  roundSeconds: number;
  warmupSeconds: number;
  /** One autocannon round of a scenario against a service. */
  drive: (url: string, sc: Scenario, seconds: number) => Promise<{ res: autocannon.Result; firstError?: string }>;
  fromCannon: (r: autocannon.Result) => RoundResult;
  log: (line: string) => void;
}

/** An OTLP/HTTP sink: reads every export and answers success, as a collector's receiver would. */
async function startSink(): Promise<{
  url: string;
  stats: { exports: number; bytes: number };
  close(): Promise<void>;
}> {
  const stats = { exports: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (stats.bytes += c.length));
    req.on('end', () => {
      stats.exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function tracingBench(deps: Deps): Promise<TracingResult> {
  const sink = await startSink();
  const sampler = 'parentbased_traceidratio 0.1';
  const services: { variant: string; svc: ServiceProcess }[] = [];
  try {
    const before = process.env.BENCH_BEFORE_DIR;
    if (before)
      services.push({
        variant: 'before',
        svc: await startService({ runtime: 'dist', env: deps.serviceEnv, cwd: before }),
      });
    services.push({ variant: 'off', svc: await startService({ runtime: deps.runtime, env: deps.serviceEnv }) });
    services.push({
      variant: 'on 10 %',
      svc: await startService({
        runtime: deps.runtime,
        env: {
          ...deps.serviceEnv,
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.1',
        },
      }),
    });
    // A service serves 503s until its indices are set up: the rounds start once every one is ready.
    for (const { variant, svc } of services) {
      const deadline = Date.now() + 300_000;
      while (
        (await fetch(`${svc.url}/health/ready`).then(
          (r) => r.status,
          () => 0,
        )) !== 200
      ) {
        if (Date.now() > deadline) throw new Error(`tracing: ${variant} not ready after 300 s`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    deps.log(`tracing: ${services.map((s) => `${s.variant} at ${s.svc.url}`).join(', ')}; sink at ${sink.url}`);
    const scenarios: TracingScenarioResult[] = [];
    for (const sc of deps.scenarios) {
      for (const { svc } of services) await deps.drive(svc.url, sc, deps.warmupSeconds);
      const rounds: TracingRound[] = [];
      for (let round = 0; round < deps.rounds; round++) {
        // Rotated each round: no variant always runs first, or always right after another.
        const order = services.map((_, k) => services[(k + round) % services.length]);
        for (const { variant, svc } of order) {
          const before = sample(svc.pid);
          const { res, firstError } = await deps.drive(svc.url, sc, deps.roundSeconds);
          const r = deps.fromCannon(res);
          const after = sample(svc.pid);
          if (firstError) deps.log(`tracing ${sc.name} ${variant}: ${firstError}`);
          rounds.push({
            ...r,
            variant,
            round,
            cpuMsPerRequest: ((after.cpuSeconds - before.cpuSeconds) * 1000) / Math.max(1, r.requests),
          });
          deps.log(
            `tracing ${sc.name} round ${round + 1} ${variant}: ${r.rps.toFixed(0)}/s p50 ${r.p50} p99 ${r.p99} ms`,
          );
        }
      }
      const of = (v: string): TracingRound[] => rounds.filter((r) => r.variant === v);
      scenarios.push({
        name: sc.name,
        rounds,
        median: Object.fromEntries(
          services.map(({ variant }) => [
            variant,
            {
              rps: Math.round(median(of(variant).map((r) => r.rps))),
              p50: median(of(variant).map((r) => r.p50)),
              p99: median(of(variant).map((r) => r.p99)),
              cpuMsPerRequest: Math.round(median(of(variant).map((r) => r.cpuMsPerRequest)) * 1000) / 1000,
            },
          ]),
        ),
        spread: Object.fromEntries(
          services.map(({ variant }) => [
            variant,
            {
              min: Math.round(Math.min(...of(variant).map((r) => r.rps))),
              max: Math.round(Math.max(...of(variant).map((r) => r.rps))),
            },
          ]),
        ),
      });
    }
    return { variants: services.map((s) => s.variant), sampler, sink: { ...sink.stats }, scenarios };
  } finally {
    for (const { svc } of services) await svc.stop();
    await sink.close();
  }
}

/** Markdown: one row per scenario and variant. */
export function tracingTable(t: TracingResult): string {
  const rows = [
    '| scenario | variant | req/s (median) | rounds' + ' min–max | p50 ms | p99 ms | service CPU ms/req | ÷ off |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const sc of t.scenarios) {
    const off = sc.median.off?.rps ?? 1;
    for (const v of t.variants) {
      const m = sc.median[v];
      const s = sc.spread[v];
      rows.push(
        `| ${sc.name} | ${v} | ${m.rps} | ${s.min}–${s.max} | ${m.p50} | ${m.p99} | ${m.cpuMsPerRequest} | ${(m.rps / off).toFixed(2)} |`,
      );
    }
  }
  return `${rows.join('\n')}\n\nsink: ${t.sink.exports} exports, ${(t.sink.bytes / 2 ** 20).toFixed(1)} MB (${t.sampler})`;
}
