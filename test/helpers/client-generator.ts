/**
 * openapi-generator, as a device team runs it: the CLI jar fetched from Maven Central into
 * ~/.m2 (like the managed Elasticsearch node), run on a JDK under /usr/lib/jvm. The commands
 * are the ones docs/api.md gives for generating a client.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  config: { openapiGeneratorVersion: string };
};
export const GENERATOR_VERSION = pkg.config.openapiGeneratorVersion;

function m2(): string {
  return process.env.MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository');
}

/** Fetches an artifact into the Maven repository once; returns the jar's path. */
export function mavenJar(groupId: string, artifactId: string, version: string, classifier?: string): string {
  const file = path.join(
    m2(),
    ...groupId.split('.'),
    artifactId,
    version,
    `${artifactId}-${version}${classifier ? `-${classifier}` : ''}.jar`,
  );
  if (!fs.existsSync(file)) {
    const coordinates = [groupId, artifactId, version, ...(classifier ? ['jar', classifier] : [])].join(':');
    execFileSync('mvn', ['-q', '-B', 'dependency:get', `-Dartifact=${coordinates}`, '-Dtransitive=false'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  }
  return file;
}

/** JAVA_HOME, or the oldest JDK of 17 or later under /usr/lib/jvm. */
export function javaHome(): string {
  if (process.env.JAVA_HOME && fs.existsSync(path.join(process.env.JAVA_HOME, 'bin', 'javac')))
    return process.env.JAVA_HOME;
  const root = '/usr/lib/jvm';
  const jdks = (fs.existsSync(root) ? fs.readdirSync(root) : [])
    .map((d) => path.join(root, d))
    .filter((d) => fs.existsSync(path.join(d, 'bin', 'javac')))
    .map((d) => {
      const release = fs.existsSync(path.join(d, 'release')) ? fs.readFileSync(path.join(d, 'release'), 'utf8') : '';
      return { d, major: Number(/JAVA_VERSION="(\d+)/.exec(release)?.[1] ?? 0) };
    })
    .filter((j) => j.major >= 17)
    // The oldest one: a generated Maven project targets Java 8, which the newest javac no longer accepts.
    .sort((a, b) => a.major - b.major);
  if (jdks.length === 0) throw new Error('no JDK 17+ under /usr/lib/jvm: set JAVA_HOME');
  return jdks[0].d;
}

/** Runs `openapi-generator-cli generate` (a fresh output folder); `properties` are its additional properties. */
export function generateClient(
  spec: string,
  generator: string,
  out: string,
  properties: Record<string, string> = {},
  library?: string,
): void {
  const jar = mavenJar('org.openapitools', 'openapi-generator-cli', GENERATOR_VERSION);
  fs.rmSync(out, { recursive: true, force: true });
  const props = Object.entries(properties).map(([k, v]) => `${k}=${v}`);
  execFileSync(
    path.join(javaHome(), 'bin', 'java'),
    [
      '-jar',
      jar,
      'generate',
      '-i',
      spec,
      '-g',
      generator,
      '-o',
      out,
      ...(library ? ['--library', library] : []),
      ...(props.length ? ['--additional-properties', props.join(',')] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
}

const diffPkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  config: { openapiDiffVersion: string };
};

/**
 * The classpath of openapi-diff-core (`config.openapiDiffVersion`) and its dependencies, fetched
 * from Maven Central into ~/.m2 by a generated one-dependency pom.
 */
export function openApiDiffClasspath(workDir: string): string {
  const version = diffPkg.config.openapiDiffVersion;
  const dir = path.join(workDir, `openapi-diff-${version}`);
  const cp = path.join(dir, 'classpath.txt');
  if (!fs.existsSync(cp)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>contract-diff</artifactId><version>1</version>
  <dependencies><dependency><groupId>org.openapitools.openapidiff</groupId><artifactId>openapi-diff-core</artifactId><version>${version}</version></dependency></dependencies>
</project>\n`,
    );
    execFileSync('mvn', ['-q', '-B', 'dependency:build-classpath', `-Dmdep.outputFile=${cp}`], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  }
  return fs.readFileSync(cp, 'utf8').trim();
}

/** openapi-diff between two documents: whether the new one breaks clients of the old, and the changes in Markdown. */
export function openApiDiff(workDir: string, before: string, after: string): { breaking: boolean; report: string } {
  const args = ['-cp', openApiDiffClasspath(workDir), path.resolve('test/contract/ContractDiff.java'), before, after];
  try {
    const report = execFileSync(path.join(javaHome(), 'bin', 'java'), args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
    return { breaking: false, report };
  } catch (e) {
    const err = e as { status?: number; stdout?: Buffer; stderr?: Buffer };
    if (err.status !== 1) throw new Error(`openapi-diff failed: ${err.stderr?.toString() ?? String(e)}`, { cause: e });
    return { breaking: true, report: err.stdout?.toString() ?? '' };
  }
}
