/**
 * The distributions the development and test tools run (Elasticsearch's minimal node,
 * Keycloak's Quarkus server) come from Maven Central as zip artifacts: fetched with Maven into
 * the local repository (`~/.m2`, or MAVEN_REPO), unpacked once under `.local/`, and run with a
 * JDK found on the machine. One way to do each of those, for both.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A zip artifact on Maven Central. */
export interface ZipArtifact {
  groupId: string;
  artifactId: string;
  version: string;
}

/** Where Maven keeps the artifact's zip in the local repository. */
export function localRepositoryZip(a: ZipArtifact): string {
  const m2 = process.env.MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository');
  return path.join(m2, ...a.groupId.split('.'), a.artifactId, a.version, `${a.artifactId}-${a.version}.zip`);
}

/** The artifact's zip in the local repository, fetched with Maven first when it is not there. */
export function fetchZipArtifact(a: ZipArtifact, log: (l: string) => void): string {
  const zip = localRepositoryZip(a);
  if (fs.existsSync(zip)) return zip;
  log(`fetching ${a.groupId}:${a.artifactId}:${a.version} from Maven Central`);
  execFileSync('mvn', ['-q', '-B', 'dependency:get', `-Dartifact=${a.groupId}:${a.artifactId}:${a.version}:zip`, '-Dtransitive=false'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return zip;
}

export interface UnpackedDistribution {
  artifact: ZipArtifact;
  /** The folder the zip holds at its top (e.g. `keycloak-26.5.6`). */
  topFolder: string;
  /** Where the distribution is to live; nothing is done when `marker` exists below it. */
  home: string;
  /** A file below `home` that says the distribution is there (e.g. `bin/kc.sh`). */
  marker: string;
  /** A JDK whose `jar` tool unpacks when the machine has no `unzip`. */
  javaHome?: () => string;
  log?: (l: string) => void;
}

/**
 * The unpacked distribution's home: fetched and unpacked on first use (into a temporary folder
 * beside `home`, renamed into place, so a half-unpacked tree is never taken for a whole one).
 * Returns whether this call unpacked it.
 */
export function ensureUnpacked(d: UnpackedDistribution): { home: string; unpacked: boolean } {
  const log = d.log ?? (() => {});
  if (fs.existsSync(path.join(d.home, d.marker))) return { home: d.home, unpacked: false };
  const zip = fetchZipArtifact(d.artifact, log);
  const parent = path.dirname(d.home);
  fs.mkdirSync(parent, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(parent, 'unpack-'));
  log(`unpacking ${path.basename(zip)}`);
  try {
    try {
      execFileSync('unzip', ['-q', zip, '-d', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      if (!d.javaHome) throw err;
      // No unzip on this machine: the JDK's jar tool extracts too (without file modes).
      execFileSync(path.join(d.javaHome(), 'bin', 'jar'), ['xf', zip], { cwd: tmp });
      execFileSync('chmod', ['-R', 'a+x', path.join(tmp, d.topFolder, 'bin')]);
    }
    fs.renameSync(path.join(tmp, d.topFolder), d.home);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { home: d.home, unpacked: true };
}

function javaMajor(home: string): number {
  try {
    return Number(/JAVA_VERSION="(\d+)/.exec(fs.readFileSync(path.join(home, 'release'), 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * The JDK to run a distribution with: `chosen` (the value of the variable `envVar`, read by the
 * caller so each tool's settings stay visible where it reads them) when set, else the newest JDK
 * of at least `minMajor` under /usr/lib/jvm; throws a sentence naming the variable when there is none.
 */
export function newestJdk(minMajor: number, chosen: string | undefined, envVar: string, forWhat: string): string {
  if (chosen) return chosen;
  const root = '/usr/lib/jvm';
  const found = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .map((d) => path.join(root, d))
        .filter((d) => fs.existsSync(path.join(d, 'bin', 'java')) && !fs.lstatSync(d).isSymbolicLink())
        .map((d) => ({ d, major: javaMajor(d) }))
        .filter((c) => c.major >= minMajor)
        .sort((a, b) => b.major - a.major)
    : [];
  if (found.length === 0) throw new Error(`${forWhat} needs Java ${minMajor}+; none found under ${root}. Set ${envVar} to a JDK ${minMajor}+.`);
  return found[0].d;
}
