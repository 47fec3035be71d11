/**
 * A managed, local Keycloak for single sign-on in development (`npm run dev:idp`) and in the
 * tests, the way src/dev/local-elasticsearch.ts manages Elasticsearch: Keycloak's Quarkus
 * distribution (`org.keycloak:keycloak-quarkus-dist`, a zip on Maven Central, version pinned in
 * package.json → `config.keycloakVersion`) is fetched with Maven into the local repository,
 * unpacked under `.local/` once per instance name, and run with `kc.sh start-dev` on 127.0.0.1
 * with an in-memory database and a realm imported from a JSON file of the repository
 * (`${VAR}` placeholders in it are filled from the environment given). Keycloak runs as root
 * too, so it needs no user of its own.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './local-elasticsearch.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const localDir = path.join(projectRoot, '.local');

/** The demo and test realm of the repository. */
export const DEMO_REALM_FILE = path.join(projectRoot, 'data', 'keycloak', 'ecs-realm.json');

export interface LocalKeycloak {
  /** Base URL, e.g. http://127.0.0.1:8180 */
  url: string;
  /** The bootstrap administrator of the master realm (for the admin API). */
  admin: { username: string; password: string };
  pid: number;
  /** True when this call started it (and so should stop it). */
  started: boolean;
  stop(): Promise<void>;
}

export interface LocalKeycloakOptions {
  /** Instance name: its own unpacked distribution, pid and log under `.local/keycloak-<name>/`. */
  name: string;
  port?: number;
  /** Realm JSON files to import at start. */
  realmFiles: string[];
  /** Values for the realm files' `${VAR}` placeholders. */
  env?: Record<string, string>;
  log?: (line: string) => void;
  /** How long to wait for the realm to answer (a cold start on a loaded machine takes minutes). */
  timeoutMs?: number;
  /** The realm whose discovery document says Keycloak is ready. */
  readyRealm: string;
}

export function pinnedKeycloakVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { config?: { keycloakVersion?: string } };
  const v = pkg.config?.keycloakVersion;
  if (!v) throw new Error('package.json config.keycloakVersion is not set');
  return v;
}

function javaMajor(home: string): number {
  try {
    return Number(/JAVA_VERSION="(\d+)/.exec(fs.readFileSync(path.join(home, 'release'), 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** KEYCLOAK_JAVA_HOME when set, else the newest JDK 21+ under /usr/lib/jvm. */
export function keycloakJavaHome(): string {
  if (process.env.KEYCLOAK_JAVA_HOME) return process.env.KEYCLOAK_JAVA_HOME;
  const root = '/usr/lib/jvm';
  const found = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .map((d) => path.join(root, d))
        .filter((d) => fs.existsSync(path.join(d, 'bin', 'java')) && !fs.lstatSync(d).isSymbolicLink())
        .map((d) => ({ d, major: javaMajor(d) }))
        .filter((c) => c.major >= 21)
        .sort((a, b) => b.major - a.major)
    : [];
  if (found.length === 0) throw new Error('Keycloak needs Java 21+; none found under /usr/lib/jvm. Set KEYCLOAK_JAVA_HOME.');
  return found[0].d;
}

function zipPath(version: string): string {
  const m2 = process.env.MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository');
  return path.join(m2, 'org/keycloak/keycloak-quarkus-dist', version, `keycloak-quarkus-dist-${version}.zip`);
}

/** The instance's own unpacked distribution (fetched with Maven into the local repository first). */
function ensureDistribution(instanceDir: string, version: string, log: (l: string) => void): string {
  const home = path.join(instanceDir, `keycloak-${version}`);
  if (fs.existsSync(path.join(home, 'bin', 'kc.sh'))) return home;
  const zip = zipPath(version);
  if (!fs.existsSync(zip)) {
    log(`fetching Keycloak ${version} from Maven Central`);
    execFileSync('mvn', ['-q', '-B', 'dependency:get', `-Dartifact=org.keycloak:keycloak-quarkus-dist:${version}:zip`, '-Dtransitive=false'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  }
  fs.mkdirSync(instanceDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(instanceDir, 'unpack-'));
  log(`unpacking ${path.basename(zip)}`);
  execFileSync('unzip', ['-q', zip, '-d', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
  fs.renameSync(path.join(tmp, `keycloak-${version}`), home);
  fs.rmSync(tmp, { recursive: true, force: true });
  return home;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
}

async function stopPid(pid: number, timeoutMs = 30_000): Promise<void> {
  if (!alive(pid)) return;
  // kc.sh runs java in its process group (detached): end the whole group.
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    process.kill(pid, 'SIGTERM');
  }
  const deadline = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (alive(pid)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      process.kill(pid, 'SIGKILL');
    }
  }
}

function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts the named Keycloak, or reuses it when its pid file names a live one whose realm
 * answers. Waits until the realm's discovery document answers; on failure throws with the
 * tail of its log.
 */
export async function startLocalKeycloak(opts: LocalKeycloakOptions): Promise<LocalKeycloak> {
  const log = opts.log ?? (() => {});
  const version = pinnedKeycloakVersion();
  const instanceDir = path.join(localDir, `keycloak-${opts.name}`);
  const stateFile = path.join(instanceDir, 'instance.json');
  fs.mkdirSync(instanceDir, { recursive: true });
  if (fs.existsSync(stateFile)) {
    const s = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { pid: number; url: string; admin: { username: string; password: string } };
    if (alive(s.pid) && (await answers(`${s.url}/realms/${opts.readyRealm}/.well-known/openid-configuration`))) {
      log(`reusing Keycloak ${opts.name} at ${s.url} (pid ${s.pid})`);
      return { url: s.url, admin: s.admin, pid: s.pid, started: false, stop: async () => {} };
    }
    if (alive(s.pid)) await stopPid(s.pid);
  }

  const home = ensureDistribution(instanceDir, version, log);
  const javaHome = keycloakJavaHome();
  const port = opts.port || (await freePort());
  const importDir = path.join(home, 'data', 'import');
  fs.rmSync(importDir, { recursive: true, force: true });
  fs.mkdirSync(importDir, { recursive: true });
  for (const f of opts.realmFiles) fs.copyFileSync(f, path.join(importDir, path.basename(f)));
  const admin = { username: 'admin', password: crypto.randomBytes(12).toString('hex') };
  const logFile = path.join(instanceDir, 'keycloak.log');
  const out = fs.openSync(logFile, 'w');
  log(`starting Keycloak ${version} (${opts.name}) on 127.0.0.1:${port} with ${javaHome}`);
  const child = spawn(
    path.join(home, 'bin', 'kc.sh'),
    // An in-memory database: every start imports the realm afresh, nothing of an earlier run remains.
    ['start-dev', '--import-realm', '--db=dev-mem', `--http-port=${port}`, '--http-host=127.0.0.1', '--health-enabled=false', '--metrics-enabled=false'],
    {
      cwd: instanceDir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: instanceDir,
        JAVA_HOME: javaHome,
        JAVA_OPTS_KC_HEAP: '-Xms64m -Xmx512m',
        KC_BOOTSTRAP_ADMIN_USERNAME: admin.username,
        KC_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
        ...opts.env,
      },
      detached: true,
      stdio: ['ignore', out, out],
    },
  );
  child.unref();
  fs.closeSync(out);
  const pid = child.pid ?? 0;
  const url = `http://127.0.0.1:${port}`;
  fs.writeFileSync(stateFile, JSON.stringify({ pid, url, admin }));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
  while (!(await answers(`${url}/realms/${opts.readyRealm}/.well-known/openid-configuration`))) {
    if (exited || !alive(pid) || Date.now() > deadline) {
      await stopPid(pid, 5000);
      throw new Error(`Keycloak (${opts.name}) did not start on ${url}.\n--- ${logFile} ---\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  log(`Keycloak (${opts.name}) answers at ${url}`);
  return {
    url,
    admin,
    pid,
    started: true,
    stop: async () => {
      await stopPid(pid);
      fs.rmSync(stateFile, { force: true });
    },
  };
}

/** Stops the named Keycloak if its state file names a live process. */
export async function stopLocalKeycloak(name: string): Promise<boolean> {
  const stateFile = path.join(localDir, `keycloak-${name}`, 'instance.json');
  if (!fs.existsSync(stateFile)) return false;
  const s = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { pid: number };
  await stopPid(s.pid);
  fs.rmSync(stateFile, { force: true });
  return true;
}
