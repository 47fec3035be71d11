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
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './local-elasticsearch.js';
import { ensureUnpacked, newestJdk } from './maven-artifact.js';
import { alive, stopProcess, tail } from './local-process.js';

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

/** KEYCLOAK_JAVA_HOME when set, else the newest JDK 21+ under /usr/lib/jvm. */
export function keycloakJavaHome(): string {
  return newestJdk(21, process.env.KEYCLOAK_JAVA_HOME, 'KEYCLOAK_JAVA_HOME', 'Keycloak');
}

/** The instance's own unpacked distribution (fetched with Maven into the local repository first). */
function ensureDistribution(instanceDir: string, version: string, log: (l: string) => void): string {
  return ensureUnpacked({
    artifact: { groupId: 'org.keycloak', artifactId: 'keycloak-quarkus-dist', version },
    topFolder: `keycloak-${version}`,
    home: path.join(instanceDir, `keycloak-${version}`),
    marker: path.join('bin', 'kc.sh'),
    log,
  }).home;
}

/** Its answer to a GET (the realm's discovery document says Keycloak is ready). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Whether the Keycloak at `url` comes to answer the realm's discovery document before the
 * deadline: false as soon as its process ends, or when it answers without that realm (another
 * realm's instance).
 */
async function becomesReady(url: string, realm: string, pid: number, deadline: number, exited = (): boolean => false): Promise<boolean> {
  for (;;) {
    if (await answers(`${url}/realms/${realm}/.well-known/openid-configuration`)) return true;
    if (exited() || !alive(pid) || Date.now() > deadline) return false;
    if (await answers(`${url}/realms/master/.well-known/openid-configuration`)) return false;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// kc.sh runs java as its child in the process group it leads (detached): end the whole group.
const stopKeycloak = (pid: number, timeoutMs?: number): Promise<void> => stopProcess(pid, { group: true, ...(timeoutMs ? { timeoutMs } : {}) });

/**
 * Starts the named Keycloak, or reuses it when its state file names a live one whose realm
 * answers (or comes to answer: a start under way). Waits until the realm's discovery document answers; on failure throws with the
 * tail of its log.
 */
export async function startLocalKeycloak(opts: LocalKeycloakOptions): Promise<LocalKeycloak> {
  const log = opts.log ?? (() => {});
  const version = pinnedKeycloakVersion();
  const instanceDir = path.join(localDir, `keycloak-${opts.name}`);
  const stateFile = path.join(instanceDir, 'instance.json');
  fs.mkdirSync(instanceDir, { recursive: true });
  const timeoutMs = opts.timeoutMs ?? 600_000;
  if (fs.existsSync(stateFile)) {
    const s = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { pid: number; url: string; admin: { username: string; password: string } };
    // A start under way (another caller of the same run, another process) is awaited, not replaced.
    if (alive(s.pid) && (await becomesReady(s.url, opts.readyRealm, s.pid, Date.now() + timeoutMs))) {
      log(`reusing Keycloak ${opts.name} at ${s.url} (pid ${s.pid})`);
      return { url: s.url, admin: s.admin, pid: s.pid, started: false, stop: async () => {} };
    }
    if (alive(s.pid)) await stopKeycloak(s.pid);
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
        // The client compiler alone: a third less CPU to start (31-33 s against 45-50 s of CPU
        // on the two-core test machine), and a local identity provider never runs long enough
        // for the optimizing compiler to pay back.
        JAVA_OPTS_APPEND: '-XX:TieredStopAtLevel=1',
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
  if (!(await becomesReady(url, opts.readyRealm, pid, Date.now() + timeoutMs, () => exited))) {
    await stopKeycloak(pid, 5000);
    throw new Error(`Keycloak (${opts.name}) did not start on ${url}.\n--- ${logFile} ---\n${tail(logFile, 40)}`);
  }
  log(`Keycloak (${opts.name}) answers at ${url}`);
  return {
    url,
    admin,
    pid,
    started: true,
    stop: async () => {
      await stopKeycloak(pid);
      fs.rmSync(stateFile, { force: true });
    },
  };
}

/** Stops the named Keycloak if its state file names a live process. */
export async function stopLocalKeycloak(name: string): Promise<boolean> {
  const stateFile = path.join(localDir, `keycloak-${name}`, 'instance.json');
  if (!fs.existsSync(stateFile)) return false;
  const s = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { pid: number };
  await stopKeycloak(s.pid);
  fs.rmSync(stateFile, { force: true });
  return true;
}
