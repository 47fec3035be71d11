/**
 * A managed, single-node, real Elasticsearch for machines without Docker.
 *
 * Elastic publishes a minimal runnable node on Maven Central
 * (`org.elasticsearch.distribution.integ-test-zip:elasticsearch`, zip, no bundled JDK).
 * This module fetches it with Maven, unpacks it under `.local/`, and runs one node per
 * instance name (`dev` for `npm start`, `test` for `npm test`) with its own config,
 * data and logs. Elasticsearch refuses to run as root, so as root the node runs as the
 * unprivileged system user `ecs-es`.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureUnpacked, newestJdk } from './maven-artifact.js';
import { alive, stopProcess, tail } from './local-process.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const localDir = path.join(projectRoot, '.local');
const esUser = 'ecs-es';

export interface LocalNode {
  url: string;
  pid: number;
  /** True when this call started the node (and so should stop it). */
  started: boolean;
  stop(): Promise<void>;
}

export interface LocalNodeOptions {
  /** Instance name: its config, data, logs and pid live under `.local/es-<name>/`. */
  name: string;
  /** HTTP port; 0 picks a free one. */
  port: number;
  heap?: string;
  log?: (line: string) => void;
  /** Extra elasticsearch.yml settings; a key given here replaces the default line. */
  settings?: Record<string, string | number | boolean>;
  /**
   * Runs after the config folder is written and handed to the node's user, before the node
   * starts: where certificates and file-realm users are put (see secure-node.ts).
   */
  prepareConfig?: (node: PreparedNodeConfig) => void;
  /** How the start-up probe reaches a secured node: the CA its certificate chains to, basic credentials. */
  probe?: NodeProbe;
}

export interface NodeProbe {
  caFile?: string;
  username?: string;
  password?: string;
}

export interface PreparedNodeConfig {
  home: string;
  javaHome: string;
  confDir: string;
  /** The unprivileged user the node runs as (when this process is root). */
  user?: { uid: number; gid: number };
}

/** The pinned server version: package.json `config.elasticsearchVersion`, the only place it is set. */
export function pinnedVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
    config?: { elasticsearchVersion?: string };
  };
  const v = pkg.config?.elasticsearchVersion;
  if (!v) throw new Error('package.json config.elasticsearchVersion is not set');
  return v;
}

/** ES_JAVA_HOME when set, else the newest JDK under /usr/lib/jvm that the server version can run on. */
export function findJavaHome(esVersion: string): string {
  return newestJdk(Number(esVersion.split('.')[0]) >= 9 ? 21 : 17, process.env.ES_JAVA_HOME, 'ES_JAVA_HOME', `Elasticsearch ${esVersion}`);
}

/** Fetches (Maven, cached in ~/.m2) and unpacks the distribution; returns its home. */
export function ensureDistribution(version: string, log: (l: string) => void = () => {}): string {
  const { home, unpacked } = ensureUnpacked({
    artifact: { groupId: 'org.elasticsearch.distribution.integ-test-zip', artifactId: 'elasticsearch', version },
    topFolder: `elasticsearch-${version}`,
    home: path.join(localDir, `elasticsearch-${version}`),
    marker: path.join('bin', 'elasticsearch'),
    javaHome: () => findJavaHome(version),
    log,
  });
  // Readable by the unprivileged user; the node writes only under its instance folder.
  if (unpacked) execFileSync('chmod', ['-R', 'a+rX', home]);
  return home;
}

function ensureUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    execFileSync('id', ['-u', esUser], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', esUser]);
  }
  const uid = Number(execFileSync('id', ['-u', esUser]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', esUser]).toString().trim());
  return { uid, gid };
}

/** The ports the kernel gives outgoing connections (Linux), when it says. */
function outgoingPortRange(): [number, number] | undefined {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low > 0 && high >= low ? [low, high] : undefined;
  } catch {
    return undefined;
  }
}

/** Listens on `port` (0: any) on loopback and closes again: the port it got, or undefined if it was taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err)));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(got));
    });
  });
}

const LOWEST_CHOSEN_PORT = 20_000;

/**
 * A free port for a server started next (a node takes seconds to bind it). Chosen below the
 * kernel's range for outgoing connections where there is room, so a client connection opened
 * in between cannot take it as its source port; otherwise any port the kernel gives.
 */
export async function freePort(): Promise<number> {
  const range = outgoingPortRange();
  if (range && range[0] - LOWEST_CHOSEN_PORT >= 1000) {
    for (let i = 0; i < 50; i++) {
      const got = await probePort(LOWEST_CHOSEN_PORT + Math.floor(Math.random() * (range[0] - LOWEST_CHOSEN_PORT)));
      if (got) return got;
    }
  }
  const any = await probePort(0);
  if (!any) throw new Error('no free port on 127.0.0.1');
  return any;
}

async function answers(url: string, timeoutMs = 2000, probe: NodeProbe = {}): Promise<boolean> {
  const target = new URL('/_cluster/health', url);
  const get = target.protocol === 'https:' ? https.get : http.get;
  return new Promise((resolve) => {
    const req = get(
      target,
      {
        timeout: timeoutMs,
        ...(probe.caFile ? { ca: fs.readFileSync(probe.caFile) } : {}),
        ...(probe.username ? { auth: `${probe.username}:${probe.password ?? ''}` } : {}),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** The folder holding the named node's config, data, logs and pid. */
export function nodeInstanceDir(name: string): string {
  return path.join(localDir, `es-${name}`);
}

/**
 * Starts the named node, or reuses it when its pid file names a live node that answers.
 * Waits until the cluster answers; on failure throws with the tail of the node's log.
 */
export async function startLocalNode(opts: LocalNodeOptions): Promise<LocalNode> {
  const log = opts.log ?? (() => {});
  const version = pinnedVersion();
  const instanceDir = nodeInstanceDir(opts.name);
  const pidFile = path.join(instanceDir, 'node.pid');
  const portFile = path.join(instanceDir, 'node.port');
  const scheme = opts.settings?.['xpack.security.http.ssl.enabled'] === true ? 'https' : 'http';

  if (fs.existsSync(pidFile) && fs.existsSync(portFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    const url = `${scheme}://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}`;
    if (pid > 0 && alive(pid) && (await answers(url, 2000, opts.probe))) {
      log(`reusing Elasticsearch node ${opts.name} at ${url} (pid ${pid})`);
      return { url, pid, started: false, stop: async () => {} };
    }
    if (pid > 0 && alive(pid)) await stopProcess(pid);
  }

  const home = ensureDistribution(version, log);
  const javaHome = findJavaHome(version);
  const port = opts.port || (await freePort());
  const user = ensureUser();

  const confDir = path.join(instanceDir, 'config');
  const dataDir = path.join(instanceDir, 'data');
  const logsDir = path.join(instanceDir, 'logs');
  const tmpDir = path.join(instanceDir, 'tmp');
  for (const d of [confDir, dataDir, logsDir, tmpDir]) fs.mkdirSync(d, { recursive: true });
  fs.cpSync(path.join(home, 'config'), confDir, { recursive: true });
  const settings: Record<string, string | number | boolean> = {
    'cluster.name': `ecs-${opts.name}`,
    'node.name': `ecs-${opts.name}`,
    'discovery.type': 'single-node',
    'network.host': '127.0.0.1',
    'http.port': port,
    'transport.port': 0,
    'path.data': dataDir,
    'path.logs': logsDir,
    'xpack.security.enabled': false,
    // Development machines fill their disks; a read-only index would look like a bug in the service.
    'cluster.routing.allocation.disk.threshold_enabled': false,
    'action.destructive_requires_name': false,
    // Duplicate keys are an error in elasticsearch.yml: an option replaces its default.
    ...opts.settings,
  };
  fs.writeFileSync(
    path.join(confDir, 'elasticsearch.yml'),
    `${Object.entries(settings)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join('\n')}\n`,
  );
  if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, instanceDir]);
  opts.prepareConfig?.({ home, javaHome, confDir, user });

  const logFile = path.join(logsDir, `${String(opts.settings?.['cluster.name'] ?? `ecs-${opts.name}`)}.log`);
  const out = fs.openSync(path.join(logsDir, 'stdout.log'), 'a');
  log(`starting Elasticsearch ${version} (${opts.name}) on 127.0.0.1:${port} with ${javaHome}`);
  const child = spawn(path.join(home, 'bin', 'elasticsearch'), [], {
    cwd: instanceDir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ES_JAVA_HOME: javaHome,
      ES_PATH_CONF: confDir,
      ES_TMPDIR: tmpDir,
      ES_JAVA_OPTS: `-Xms${opts.heap ?? '512m'} -Xmx${opts.heap ?? '512m'}`,
      HOME: instanceDir,
    },
    uid: user?.uid,
    gid: user?.gid,
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  fs.closeSync(out);
  const pid = child.pid ?? 0;
  fs.writeFileSync(pidFile, String(pid));
  fs.writeFileSync(portFile, String(port));
  const url = `${scheme}://127.0.0.1:${port}`;

  const deadline = Date.now() + 180_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (!(await answers(url, 2000, opts.probe))) {
    if (exited || !alive(pid) || Date.now() > deadline) {
      await stopProcess(pid, { timeoutMs: 5000 });
      throw new Error(
        `Elasticsearch (${opts.name}) did not start on ${url}.\n--- ${logFile} ---\n${tail(logFile)}\n--- stdout ---\n${tail(path.join(logsDir, 'stdout.log'))}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  log(`Elasticsearch (${opts.name}) answers at ${url}`);
  return {
    url,
    pid,
    started: true,
    stop: async () => {
      await stopProcess(pid);
      fs.rmSync(pidFile, { force: true });
    },
  };
}

/** Stops the named node if its pid file names a live process. */
export async function stopLocalNode(name: string): Promise<boolean> {
  const pidFile = path.join(localDir, `es-${name}`, 'node.pid');
  if (!fs.existsSync(pidFile)) return false;
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  if (pid > 0 && alive(pid)) await stopProcess(pid);
  fs.rmSync(pidFile, { force: true });
  return true;
}
