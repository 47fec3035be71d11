/**
 * Bulk actions as jobs (issue 16): a job over every seeded agent (100k in the full set, 10k
 * with --quick) while agents connect, against a service of its own with the job rate set
 * (BENCH_JOB_RATE, default 500 per second; the service's own default is 200). Agents' connects
 * are offered at a fixed rate (BENCH_JOB_CONNECT_RATE; default 300/s quick, 1000/s full) on 64
 * connections, first without a job for the length the job will take, then while the job runs;
 * reported: the job's records per second (from its startedAt to finishedAt) and connect p50/p99
 * with and without it. The action is ENABLE_MODULE (one EnabledModules write per agent through
 * the modules service), alternating between two modules run after run so each run writes.
 */
import autocannon from 'autocannon';
import { API } from './scenarios.js';
import { startService, type Runtime } from './service-process.js';

export interface JobsResult {
  agents: number;
  ratePerSecond: number;
  connectRate: number;
  job: { id: string; state: string; matched: number; done: number; failed: number; seconds: number; recordsPerSecond: number };
  connectAlone: ConnectRound;
  connectDuringJob: ConnectRound;
  /** connect p99 during the job ÷ alone. */
  p99Ratio: number;
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
    // Which module this run enables: the one the previous run did not (so every run writes).
    const probe = await call<{ vuln?: string }>(svc.url, admin, 'GET', `/endpoint/${agentIds[0]}/enabled-modules`);
    const module = probe.status === 200 && probe.body.vuln === 'ACTIVE' ? 'fde' : 'vuln';
    const expectedS = Math.max(5, Math.ceil(agentIds.length / ratePerSecond));
    log(`jobs: warm-up, then connects alone at ${connectRate}/s for ${expectedS} s`);
    await connects(svc.url, admin, agentIds, connectRate, 3);
    const connectAlone = await connects(svc.url, admin, agentIds, connectRate, expectedS);
    log(`jobs: connect alone p50 ${connectAlone.p50} p99 ${connectAlone.p99} ms (${connectAlone.rps.toFixed(0)} rps, errors ${connectAlone.errors})`);

    const created = await call<JobBody>(svc.url, admin, 'POST', '/jobs', { action: { type: 'ENABLE_MODULE', module }, criteria: {} });
    if (created.status !== 202) throw new Error(`creating the job: ${created.status} ${JSON.stringify(created.body)}`);
    log(`jobs: job ${created.body.id} (ENABLE_MODULE ${module}) over every agent at ${ratePerSecond}/s; connects at ${connectRate}/s meanwhile`);
    const connectDuringJob = await connects(svc.url, admin, agentIds, connectRate, expectedS);
    let job = created.body;
    for (;;) {
      job = (await call<JobBody>(svc.url, admin, 'GET', `/jobs/${job.id}`)).body;
      if (job.finishedAt) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
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
        `${job.failures.length ? ` (first failure: ${job.failures[0].reason})` : ''}; connect p99 ${connectDuringJob.p99} ms during vs ${connectAlone.p99} ms alone (×${result.p99Ratio.toFixed(2)})`,
    );
    return result;
  } finally {
    await svc.stop();
  }
}

export function jobsTable(r: JobsResult): string {
  return [
    '| | agents | job rate bound | job records/s | job s | connect offered/s | connect p50 ms | connect p99 ms | connect errors |',
    '|---|---|---|---|---|---|---|---|---|',
    `| connects alone | ${r.agents} | | | | ${r.connectRate} | ${r.connectAlone.p50} | ${r.connectAlone.p99} | ${r.connectAlone.errors} |`,
    `| during the job | ${r.agents} | ${r.ratePerSecond}/s | ${r.job.recordsPerSecond.toFixed(0)} | ${r.job.seconds.toFixed(1)} | ${r.connectRate} | ${r.connectDuringJob.p50} | ${r.connectDuringJob.p99} | ${r.connectDuringJob.errors} |`,
  ].join('\n');
}
