/**
 * Bulk actions as jobs: a job over every seeded agent (100k in the full set, 10k
 * with --quick) while agents connect, against a service of its own with the job rate set
 * (BENCH_JOB_RATE, default 500 per second; the service's own default is 200). Agents' connects
 * are offered at a fixed rate (BENCH_JOB_CONNECT_RATE; default 300/s quick, 1000/s full) on 64
 * connections in windows (10 s quick, 20 s full): two alone, then back to back while the job
 * runs, then two alone again (the machine's load drifts; the baseline brackets the job);
 * reported: the job's records per second (from its startedAt to finishedAt) and connect
 * p50/p99 (medians over windows, and the worst window) alone and during the job. The action is
 * ENABLE_MODULE vuln (one EnabledModules write per agent through the modules service), or
 * DISABLE_MODULE vuln when an earlier run enabled it, so that every run writes.
 */
import autocannon from 'autocannon';
import { API } from './scenario.js';
import { startService, type Runtime } from './service-process.js';

export interface JobsResult {
  agents: number;
  ratePerSecond: number;
  connectRate: number;
  job: { id: string; state: string; matched: number; done: number; failed: number; seconds: number; recordsPerSecond: number };
  /** Windows of connects alone, before and after the job. */
  connectAlone: ConnectSummary;
  /** Windows of connects, back to back, while the job ran. */
  connectDuringJob: ConnectSummary;
  /** Median window p99 during the job ÷ alone. */
  p99Ratio: number;
}

/** Connect windows: medians of their rates and percentiles, the worst p99, every window's p99. */
interface ConnectSummary {
  windows: number;
  rps: number;
  p50: number;
  p99: number;
  maxP99: number;
  errors: number;
  windowsP99: number[];
}

interface ConnectRound {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  seconds: number;
}

interface JobBody {
  id: string;
  state: string;
  matched: number;
  done: number;
  failed: number;
  startedAt?: string;
  finishedAt?: string;
  failures: { reason: string }[];
}

/** Windows alone before the job, and again after it. */
const ALONE_WINDOWS = 2;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function summary(ws: ConnectRound[]): ConnectSummary {
  return {
    windows: ws.length,
    rps: median(ws.map((w) => w.rps)),
    p50: median(ws.map((w) => w.p50)),
    p99: median(ws.map((w) => w.p99)),
    maxP99: Math.max(...ws.map((w) => w.p99)),
    errors: ws.reduce((n, w) => n + w.errors, 0),
    windowsP99: ws.map((w) => w.p99),
  };
}

const pick = <T>(list: readonly T[], i: number): T => list[(i * 7919) % list.length];

function connects(url: string, token: string, agentIds: string[], rate: number, seconds: number): Promise<ConnectRound> {
  let n = 0;
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url,
        connections: 64,
        pipelining: 1,
        duration: seconds,
        overallRate: rate,
        headers: { 'x-auth-token': token },
        requests: [{ method: 'POST', setupRequest: (r) => ({ ...r, path: `${API}/endpoint/${pick(agentIds, n++)}/connect` }) }],
      },
      (err, r) =>
        err
          ? reject(err)
          : resolve({
              rps: (r.requests.total - r.non2xx - r.errors) / r.duration,
              p50: r.latency.p50,
              p99: r.latency.p99,
              errors: r.non2xx + r.errors,
              seconds: r.duration,
            }),
    ),
  );
}

async function call<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${API}${path}`, {
    method,
    headers: { 'x-auth-token': token, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export async function jobsBench(opts: {
  runtime: Runtime;
  serviceEnv: Record<string, string>;
  admin: string;
  agentIds: string[];
  quick: boolean;
  log: (l: string) => void;
}): Promise<JobsResult> {
  const { admin, agentIds, log } = opts;
  const ratePerSecond = Number(process.env.BENCH_JOB_RATE ?? 500);
  const connectRate = Number(process.env.BENCH_JOB_CONNECT_RATE ?? (opts.quick ? 300 : 1000));
  const svc = await startService({ runtime: opts.runtime, env: { ...opts.serviceEnv, ECS_JOB_RATE_PER_SECOND: String(ratePerSecond) } });
  try {
    // Enable the module, or disable it when an earlier run enabled it, so that every run writes.
    const probe = await call<{ vuln?: string }>(svc.url, admin, 'GET', `/endpoint/${agentIds[0]}/enabled-modules`);
    const type = probe.status === 200 && probe.body.vuln === 'ACTIVE' ? 'DISABLE_MODULE' : 'ENABLE_MODULE';
    const module = 'vuln';
    const windowS = opts.quick ? 10 : 20;
    log(`jobs: warm-up, then connects alone at ${connectRate}/s, ${ALONE_WINDOWS} windows of ${windowS} s`);
    await connects(svc.url, admin, agentIds, connectRate, 3);
    const alone: ConnectRound[] = [];
    for (let w = 0; w < ALONE_WINDOWS; w++) alone.push(await connects(svc.url, admin, agentIds, connectRate, windowS));
    log(`jobs: connect alone p99 ${alone.map((x) => x.p99).join(', ')} ms`);

    const created = await call<JobBody>(svc.url, admin, 'POST', '/jobs', { action: { type, module }, criteria: {}, allAgents: true });
    if (created.status !== 202) throw new Error(`creating the job: ${created.status} ${JSON.stringify(created.body)}`);
    log(`jobs: job ${created.body.id} (${type} ${module}) over every agent at ${ratePerSecond}/s; connects at ${connectRate}/s meanwhile`);
    // Windows of connects, each as long as the one alone, for as long as the job runs; the worst window counts.
    const windows: ConnectRound[] = [];
    let job = created.body;
    for (;;) {
      windows.push(await connects(svc.url, admin, agentIds, connectRate, windowS));
      job = (await call<JobBody>(svc.url, admin, 'GET', `/jobs/${job.id}`)).body;
      if (job.finishedAt) break;
      log(`jobs: ${job.done + job.failed}/${job.matched} so far; connect p99 ${windows[windows.length - 1].p99} ms in the last window`);
    }
    // The same number of windows alone after the job: the machine's load drifts, so the baseline brackets the job.
    for (let w = 0; w < ALONE_WINDOWS; w++) alone.push(await connects(svc.url, admin, agentIds, connectRate, windowS));
    const connectAlone = summary(alone);
    const connectDuringJob = summary(windows);
    const seconds = (Date.parse(job.finishedAt as string) - Date.parse(job.startedAt ?? job.finishedAt ?? '')) / 1000;
    const result: JobsResult = {
      agents: agentIds.length,
      ratePerSecond,
      connectRate,
      job: {
        id: job.id,
        state: job.state,
        matched: job.matched,
        done: job.done,
        failed: job.failed,
        seconds,
        recordsPerSecond: (job.done + job.failed) / Math.max(0.001, seconds),
      },
      connectAlone,
      connectDuringJob,
      p99Ratio: connectDuringJob.p99 / Math.max(1, connectAlone.p99),
    };
    log(
      `jobs: ${job.state} matched ${job.matched} done ${job.done} failed ${job.failed} in ${seconds.toFixed(1)} s = ${result.job.recordsPerSecond.toFixed(0)} records/s` +
        `${job.failures.length ? ` (first failure: ${job.failures[0].reason})` : ''}; connect p99 (median of windows) ${connectDuringJob.p99} ms during (${connectDuringJob.windowsP99.join(', ')}) vs ${connectAlone.p99} ms alone (${connectAlone.windowsP99.join(', ')}): ×${result.p99Ratio.toFixed(2)}`,
    );
    return result;
  } finally {
    await svc.stop();
  }
}

export function jobsTable(r: JobsResult): string {
  return [
    '| | agents (seeded) / the job acted on | job rate bound | job records/s | job s | connect offered/s | windows | connect p50 ms (median) | connect p99 ms (median) | worst window p99 ms | connect errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    `| connects alone (before and after) | ${r.agents} / – | | | | ${r.connectRate} | ${r.connectAlone.windows} | ${r.connectAlone.p50} | ${r.connectAlone.p99} | ${r.connectAlone.maxP99} | ${r.connectAlone.errors} |`,
    `| during the job | ${r.agents} / ${r.job.done + r.job.failed} | ${r.ratePerSecond}/s | ${r.job.recordsPerSecond.toFixed(0)} | ${r.job.seconds.toFixed(1)} | ${r.connectRate} | ${r.connectDuringJob.windows} | ${r.connectDuringJob.p50} | ${r.connectDuringJob.p99} | ${r.connectDuringJob.maxP99} | ${r.connectDuringJob.errors} |`,
  ].join('\n');
}
