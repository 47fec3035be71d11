/**
 * The previous release, built from its commit (package.json → config.previousRelease.commit,
 * tagged `v<version>` where tags were fetched) into `.local/previous-release/<commit>/` with
 * `git archive`, and started as a child process against a store of the test's choosing.
 * Its dependencies: when every package its package-lock.json installs is in the current lock at
 * the same path, version and integrity (a later release only added packages), the current
 * node_modules (a symlink, instant); otherwise its own production install (`npm ci --omit=dev`,
 * from the npm cache, about half a minute), kept with the build for later runs. It runs its
 * TypeScript sources through the current checkout's tsx.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface PreviousRelease {
  version: string;
  commit: string;
  dir: string;
  /** How its dependencies were provided, and how long building it took (0 when reused). */
  install: 'shared' | 'own';
  buildMs: number;
}

function previousReleaseConfig(): { version: string; commit: string } {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    config: { previousRelease: { version: string; commit: string } };
  };
  return pkg.config.previousRelease;
}

interface LockFile {
  packages: Record<string, { version?: string; integrity?: string; link?: boolean }>;
}

/** Whether the install of lock `current` holds every package lock `wanted` installs, each where and as it wants it. */
export function lockInstalledBy(wanted: string, current: string): boolean {
  const read = (f: string) => (JSON.parse(fs.readFileSync(f, 'utf8')) as LockFile).packages;
  const want = read(wanted);
  const have = read(current);
  return Object.entries(want).every(([where, p]) => {
    if (where === '') return true;
    const h = have[where];
    return h !== undefined && h.version === p.version && h.integrity === p.integrity && h.link === p.link;
  });
}

/** Builds the previous release once per commit (reused by later runs). */
export function buildPreviousRelease(log: (line: string) => void = () => undefined): PreviousRelease {
  const { version, commit } = previousReleaseConfig();
  const dir = path.join(root, '.local', 'previous-release', commit);
  const marker = path.join(dir, '.built');
  const shared = (): boolean => lockInstalledBy(path.join(dir, 'package-lock.json'), path.join(root, 'package-lock.json'));
  if (fs.existsSync(marker)) {
    return { version, commit, dir, install: fs.lstatSync(path.join(dir, 'node_modules')).isSymbolicLink() ? 'shared' : 'own', buildMs: 0 };
  }
  const t0 = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  try {
    execFileSync('git', ['-C', root, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    // A shallow or single-branch clone: fetch just that commit.
    execFileSync('git', ['-C', root, 'fetch', '--quiet', '--depth=1', 'origin', commit], { stdio: 'inherit' });
  }
  const tar = execFileSync('git', ['-C', root, 'archive', '--format=tar', commit], { maxBuffer: 512 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  let install: PreviousRelease['install'];
  if (shared()) {
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    install = 'shared';
  } else {
    log(`previous release ${version}: its own production install (npm ci --omit=dev)`);
    execFileSync('npm', ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    install = 'own';
  }
  fs.writeFileSync(marker, new Date().toISOString());
  return { version, commit, dir, install, buildMs: Date.now() - t0 };
}

export interface ReleaseInstance {
  url: string;
  child: ChildProcess;
  /** Its log lines so far (JSON strings). */
  logs: string[];
  /** SIGTERM (drains in-flight requests), resolved on exit. */
  stop(): Promise<number | null>;
}

/** Starts the release in `dir` (its `src/main.ts`) with `env`; resolves once it listens. */
export async function startRelease(release: PreviousRelease, env: Record<string, string>): Promise<ReleaseInstance> {
  const tsx = path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
  const child = spawn(process.execPath, ['--import', `file://${tsx}`, 'src/main.ts'], {
    cwd: release.dir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        logs.push(line);
        const m = /"url":"(http:\/\/[^"]+)".*endpoint control service listening/.exec(line);
        if (m) resolve(m[1]);
      }
    });
    void exited.then((code) => reject(new Error(`previous release exited ${code} before listening: ${err.slice(-2000)}`)));
  });
  return {
    url,
    child,
    logs,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
