/**
 * `npm run bench -- agent-channel [--agents 50000] [--rate 200] [--seconds 30] [--generators 4] [--tsx]`:
 * held agent channels on one instance (docs/adr/0113-agent-channel.md). Starts two instances of
 * the service on one store (A holds the agents, B takes the commands), registers the agents
 * through the API, and holds them on A from separate load-generator processes
 * (bench/agent-channel-load.ts), each on its own loopback source address (127.0.0.2…) with the
 * open-files limit raised in the shell that starts it; half WebSocket, half long poll. Then:
 * A's RSS and CPU idle with every agent held, commands created through B at a fixed rate for
 * random agents (delivery latency p50/p99: created → frame or answer received; deliveries
 * counted for exactly once), and the time for every agent to be held again after A restarts.
 * Writes bench/results/<date>-agent-channel.json. Figures count only from a quiet machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { cpuPercent, machine, sample, type ProcSample } from './proc.js';
import { buildService, startService, type Runtime, type ServiceProcess } from './service-process.js';

interface Options {
  agents: number;
  rate: number;
  seconds: number;
  generators: number;
  runtime: Runtime;
}

function options(args: string[]): Options {
  const num = (name: string, dflt: number): number => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  return {
    agents: num('agents', 50_000),
    rate: num('rate', 200),
    seconds: num('seconds', 30),
    generators: num('generators', 4),
    runtime: args.includes('--tsx') ? 'tsx' : 'dist',
  };
}

const log = (l: string): void => console.log(`[agent-channel] ${l}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function call<T>(url: string, token: string, method: string, p: string, body?: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${url}/endpoint-control-service/v1${p}`, {
      method,
      headers: { 'x-auth-token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if ((res.status === 503 || res.status === 429) && attempt < 20) {
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    if (res.status >= 300) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

async function pooled<T>(n: number, parallel: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await work(i);
    }
  }));
  return out;
}

interface Generator {
  child: ChildProcess;
  held: number;
  errors: number;
}

/** Starts a load generator in a shell that raises its open-files limit first. */
function startGenerator(sliceFile: string, sink: { latencies: number[]; ids: string[] }): Generator {
  const cmd = `ulimit -n $(ulimit -Hn); exec "${process.execPath}" --import tsx bench/agent-channel-load.ts "${sliceFile}"`;
  const child = spawn('bash', ['-c', cmd], { stdio: ['pipe', 'pipe', 'inherit'] });
  const g: Generator = { child, held: 0, errors: 0 };
  readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    const r = JSON.parse(line) as { held: number; errors: number; latencies: number[]; ids: string[] };
    g.held = r.held;
    g.errors = r.errors;
    sink.latencies.push(...r.latencies);
    sink.ids.push(...r.ids);
  });
  return g;
}

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function waitHeld(gens: Generator[], n: number, limitMs: number): Promise<number> {
  const t0 = Date.now();
  while (gens.reduce((s, g) => s + g.held, 0) < n) {
    if (Date.now() - t0 > limitMs) throw new Error(`only ${gens.reduce((s, g) => s + g.held, 0)} of ${n} agents held after ${limitMs / 1000} s`);
    await sleep(100);
  }
  return Date.now() - t0;
}

/** CPU (% of a core) and RSS of a process over `ms`. */
async function measure(pid: number, ms: number): Promise<{ cpuPercent: number; rssMb: number }> {
  const a: ProcSample = sample(pid);
  await sleep(ms);
  const b = sample(pid);
  return { cpuPercent: Math.round(cpuPercent(a, b) * 10) / 10, rssMb: Math.round(b.rssMb) };
}

/** Drops the run's indices and templates (the bench writes under its own prefix, on a cluster that may be shared). */
async function dropPrefix(esUrl: string, prefix: string): Promise<void> {
  const indices = (await (await fetch(`${esUrl}/_cat/indices/${prefix}-*?h=index`)).text()).split('\n').filter(Boolean);
  if (indices.length > 0) await fetch(`${esUrl}/${indices.join(',')}`, { method: 'DELETE' });
  const templates = (await (await fetch(`${esUrl}/_index_template/${prefix}-*`)).json()) as { index_templates?: { name: string }[] };
  for (const t of templates.index_templates ?? []) await fetch(`${esUrl}/_index_template/${t.name}`, { method: 'DELETE' });
}

export async function agentChannelBench(args: string[]): Promise<void> {
  const o = options(args);
  const esUrl = process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200';
  const admin = `bench-admin-${crypto.randomBytes(12).toString('hex')}`;
  const prefix = `ecs-benchch${Date.now().toString(36)}`;
  const env = { ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: prefix, ECS_ADMIN_TOKEN: admin, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' };
  const started = machine();
  log(`${o.agents} agents, ${o.rate} commands/s for ${o.seconds} s, ${o.generators} generators; load ${String(started.loadAverage)}`);
  if (o.runtime === 'dist') buildService(log);
  let a: ServiceProcess = await startService({ runtime: o.runtime, env });
  const b = await startService({ runtime: o.runtime, env }).catch(async (err: unknown) => {
    await a.stop();
    throw err;
  });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-bench-channel-'));
  const gens: Generator[] = [];
  try {
    const org = `bench-org-${crypto.randomBytes(4).toString('hex')}`;
    await call(b.url, admin, 'POST', '/admin/organizations', { id: org, name: 'Bench channel org' });
    const t0 = Date.now();
    const agents = await pooled(o.agents, 32, async () => {
      const ep = await call<{ id: string }>(b.url, admin, 'POST', '/endpoint', { orgId: org, displayName: 'bench-agent', hostInfo: { os: 'linux' } });
      const tok = await call<{ token: string }>(b.url, admin, 'POST', '/admin/tokens', { name: `agent-${ep.id}`, role: 'agent', orgId: org, endpointId: ep.id });
      return { endpointId: ep.id, token: tok.token };
    });
    log(`registered ${o.agents} agents in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const empty = await measure(a.pid, 5000);
    const sink = { latencies: [] as number[], ids: [] as string[] };
    const per = Math.ceil(o.agents / o.generators);
    for (let g = 0; g < o.generators; g++) {
      const file = path.join(tmp, `slice-${g}.json`);
      const tokens = agents.slice(g * per, (g + 1) * per).map((x) => x.token);
      fs.writeFileSync(file, JSON.stringify({ url: a.url, localAddress: `127.0.0.${2 + g}`, tokens, waitSeconds: 300 }));
      gens.push(startGenerator(file, sink));
    }
    const heldMs = await waitHeld(gens, o.agents, 600_000);
    log(`all ${o.agents} held after ${(heldMs / 1000).toFixed(1)} s`);
    await sleep(5000);
    const idle = await measure(a.pid, 10_000);
    log(`idle with ${o.agents} held: CPU ${idle.cpuPercent} % of a core, RSS ${idle.rssMb} MB (${empty.rssMb} MB before)`);

    // Commands at a fixed rate through B for random agents.
    sink.latencies.length = 0;
    sink.ids.length = 0;
    const created: string[] = [];
    const total = o.rate * o.seconds;
    const loadStart = sample(a.pid);
    const tStart = Date.now();
    const creates: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = tStart + (i * 1000) / o.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      const target = agents[Math.floor(Math.random() * agents.length)];
      creates.push(
        call<{ id: string }>(b.url, admin, 'POST', `/command-message/endpoint/${target.endpointId}`, { module: 'cmd', name: 'ping' }).then((m) => void created.push(m.id)),
      );
    }
    await Promise.all(creates);
    const loaded = sample(a.pid);
    const deadline = Date.now() + 30_000;
    while (sink.ids.length < created.length && Date.now() < deadline) await sleep(200);
    const unique = new Set(sink.ids);
    const delivery = {
      created: created.length,
      delivered: sink.ids.length,
      duplicates: sink.ids.length - unique.size,
      missing: created.filter((id) => !unique.has(id)).length,
      p50Ms: percentile(sink.latencies, 50),
      p99Ms: percentile(sink.latencies, 99),
      cpuPercent: Math.round(cpuPercent(loadStart, loaded) * 10) / 10,
      rssMb: Math.round(loaded.rssMb),
    };
    log(`delivery: ${JSON.stringify(delivery)}`);

    // A restarts: every agent comes back to the new process.
    const stopAt = Date.now();
    await a.stop();
    const stoppedMs = Date.now() - stopAt;
    // On the same port, as an instance restarts behind its address: the agents retry where they were.
    a = await startService({ runtime: o.runtime, env: { ...env, PORT: new URL(a.url).port } });
    const upMs = Date.now() - stopAt;
    for (const g of gens) g.child.stdin?.write(JSON.stringify({ url: a.url }) + '\n');
    await waitHeld(gens, o.agents, 600_000);
    const backMs = Date.now() - stopAt;
    log(`every agent held again ${(backMs / 1000).toFixed(1)} s after the instance stopped (stopped after ${(stoppedMs / 1000).toFixed(1)} s, up again after ${(upMs / 1000).toFixed(1)} s)`);

    const result = {
      scenario: 'agent-channel',
      machine: started,
      options: o,
      heldAfterMs: heldMs,
      idle: { ...idle, rssBeforeMb: empty.rssMb, rssPerAgentKb: Math.round(((idle.rssMb - empty.rssMb) * 1024) / o.agents * 10) / 10 },
      delivery,
      restart: { backMs, stoppedMs, upMs, generatorErrors: gens.reduce((s, g) => s + g.errors, 0) },
    };
    const out = path.join('bench', 'results', `${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}-agent-channel.json`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    console.log(
      [
        '| agents | held in | idle CPU | RSS/agent | p50 | p99 | dup / missing | CPU under delivery | back after restart |',
        '|---|---|---|---|---|---|---|---|---|',
        `| ${o.agents} | ${(heldMs / 1000).toFixed(1)} s | ${idle.cpuPercent} % | ${result.idle.rssPerAgentKb} KB | ${delivery.p50Ms} ms | ${delivery.p99Ms} ms | ${delivery.duplicates} / ${delivery.missing} | ${delivery.cpuPercent} % | ${(backMs / 1000).toFixed(1)} s |`,
      ].join('\n'),
    );
    log(`wrote ${out}`);
  } finally {
    for (const g of gens) g.child.kill('SIGTERM');
    await Promise.all([a.stop(), b.stop()]);
    fs.rmSync(tmp, { recursive: true, force: true });
    await dropPrefix(esUrl, prefix).catch((err: unknown) => log(`could not drop ${prefix}-*: ${(err as Error).message}`));
  }
}
