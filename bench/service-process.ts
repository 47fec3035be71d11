/**
 * The service under test, as a child process started the way `npm start` starts it: built
 * to dist/ and run with plain node (`--tsx` runs src/main.ts through the tsx loader instead,
 * for comparison). Its stdout (the access log, one line per request at the default `info`
 * level) goes to a file, as it would to a log collector, so the bench process does not pay
 * for reading it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export type Runtime = 'dist' | 'tsx';

export interface ServiceProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  /** SIGTERM, then waits for the exit (the CPU profile, when asked, is written then). */
  stop(): Promise<void>;
}

/** `npm run build` (tsc to dist/, incremental): what `npm start` runs first. */
export function buildService(log: (l: string) => void): void {
  const t0 = Date.now();
  const res = spawnSync('npm', ['run', '--silent', 'build'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (res.status !== 0) throw new Error(`npm run build failed (${res.status ?? res.signal})`);
  log(`built dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** The command of `npm start` that runs the service: its environment, node and flags, then dist/main.js. */
function startCommand(): RegExpExecArray {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  const run = /((?:\b[A-Z_]+=\S+\s+)*)\bnode((?:\s+--\S+)*)\s+dist\/main\.js/.exec(pkg.scripts.start);
  if (!run) throw new Error('package.json start script does not run node … dist/main.js');
  return run;
}

/** The node flags of `npm start` (package.json), so the bench runs the service as it ships. */
export function startFlags(): string[] {
  return startCommand()[2].split(/\s+/).filter(Boolean);
}

/** `NAME=value` words (a shell's assignments, a Dockerfile's ENV) as variables. */
export function assignments(words: string): Record<string, string> {
  return Object.fromEntries(
    words
      .split(/\s+/)
      .filter(Boolean)
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
}

/** The environment `npm start` sets for the process (the C library's allocator, docs/adr/0145). */
export function startEnv(): Record<string, string> {
  return assignments(startCommand()[1]);
}

/** startEnv, less what the bench's own environment sets: an experiment's value wins. */
export function shippedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(startEnv()).filter(([k]) => process.env[k] === undefined));
}

export async function startService(opts: {
  runtime: Runtime;
  env: Record<string, string>;
  /** Writes a V8 CPU profile of the whole life of the process into this directory. */
  profileDir?: string;
  /** Another checkout whose dist/ runs instead (an earlier build, for a before/after comparison). */
  cwd?: string;
}): Promise<ServiceProcess> {
  return startChild(
    'service',
    [
      // The flags `npm start` runs the service with, then extra ones for experiments, which win
      // (e.g. BENCH_NODE_FLAGS="--max-semi-space-size=64" for the default young generation).
      ...startFlags(),
      ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean),
      ...(opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : []),
      ...(opts.runtime === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js']),
    ],
    { ...shippedEnv(), ...opts.env },
    opts.cwd,
  );
}

/**
 * The bare hop (bench/hop-server.ts): the direct equivalents behind a plain node:http server,
 * the least any Node HTTP service in front of Elasticsearch costs on this machine. With
 * `profileDir`, profiled as the service is, so the two profiles compare; `nodeFlags` before the
 * script (bench/gc-survival.ts runs it with the service's).
 */
export function startHop(env: Record<string, string>, profileDir?: string, nodeFlags: string[] = []): Promise<ServiceProcess> {
  return startChild('hop', [...nodeFlags, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), '--import', 'tsx', 'bench/hop-server.ts'], env);
}

/** A node child that logs a JSON line with its `url` once it listens; stdout goes to a file. */
async function startChild(name: string, args: string[], env: Record<string, string>, cwd?: string): Promise<ServiceProcess> {
  const logFile = path.join(os.tmpdir(), `ecs-bench-${name}-${process.pid}-${Date.now()}.log`);
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: '0', ...env, HOST: '127.0.0.1' },
    ...(cwd ? { cwd } : {}),
    stdio: ['ignore', out, 'inherit'],
  });
  fs.closeSync(out);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const deadline = Date.now() + 60_000;
  let url: string | undefined;
  while (!url) {
    if (exited !== undefined) throw new Error(`${name} exited with ${exited}; see ${logFile}`);
    if (Date.now() > deadline) throw new Error(`${name} did not start in 60 s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
    url = /"url":"(http:\/\/[^"]+)"/.exec(fs.readFileSync(logFile, 'utf8'))?.[1];
  }
  return {
    url,
    pid: child.pid as number,
    child,
    logFile,
    stop: async () => {
      if (exited === undefined) child.kill('SIGTERM');
      await exit;
    },
  };
}

/**
 * Records the service stamped with their organization's ancestry in the background while it ran
 * (its `org paths:` log lines, src/resources/organizations/ancestry-migration.ts). A direct write
 * without the ancestry is such a record: the service then pays, inside its measured rounds, for
 * work the bench made. A run reports them, and should have none.
 */
export async function stampedInBackground(logFile: string): Promise<number> {
  let stamped = 0;
  // Line by line: a run's access log passes the longest string V8 makes.
  for await (const line of readline.createInterface({ input: fs.createReadStream(logFile, 'utf8'), crlfDelay: Infinity })) {
    if (!line.includes('"msg":"org paths:')) continue;
    const n = (JSON.parse(line) as { stamped?: unknown }).stamped;
    if (typeof n === 'number') stamped += n;
  }
  return stamped;
}
