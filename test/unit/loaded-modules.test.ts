/**
 * What a service process loads before it serves (docs/adr/0142-what-a-request-does-not-need-is-not-loaded.md):
 * the OpenTelemetry SDK and its exporters only when tracing is on, and no body parser beyond the
 * JSON and form readers the routes use. A child process imports the server module with a
 * resolve hook that records every module it loads.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';

const root = path.resolve(import.meta.dirname, '..', '..');

/** The packages (node_modules/<name>) a fresh process loads when it imports `entry` and runs `then`. */
function packagesLoaded(entry: string, then = ''): string[] {
  const script = `
    import module from 'node:module';
    const seen = new Set();
    module.registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
    const m = await import(${JSON.stringify(pathToFileURL(path.join(root, entry)).href)});
    ${then}
    process.stdout.write(JSON.stringify([...seen]));
  `;
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(res.status, res.stderr).to.equal(0);
  const urls = JSON.parse(res.stdout) as string[];
  const names = new Set<string>();
  for (const u of urls) {
    const at = u.lastIndexOf('/node_modules/');
    if (at < 0) continue;
    const parts = u.slice(at + '/node_modules/'.length).split('/');
    names.add(parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
  }
  return [...names];
}

const SDK = ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/context-async-hooks'];

describe('what a service process loads', function () {
  this.timeout(120_000);

  it('the server and its app load the store client, the framework and the tracing API, but not the tracing SDK nor a multipart parser', function () {
    const loaded = packagesLoaded('src/server.ts');
    // The hook sees the packages the server does use: the check can tell loaded from not.
    expect(loaded).to.include.members(['@elastic/elasticsearch', 'koa', 'co-body', '@opentelemetry/api']);
    for (const pkg of [...SDK, 'koa-body', 'zod', 'formidable']) expect(loaded, pkg).to.not.include(pkg);
  });

  it('turning tracing on loads the SDK and its exporter', function () {
    const cfg = JSON.stringify({
      enabled: true,
      url: 'http://127.0.0.1:9/v1/traces',
      protocol: 'http/protobuf',
      sampler: 'always_on',
      samplerRatio: 1,
      serviceName: 'loaded-modules-test',
      resourceAttributes: {},
      exportDelayMs: 60_000,
    });
    const quiet = '{ info() {}, warn() {}, error() {}, debug() {} }';
    const loaded = packagesLoaded('src/tracing.ts', `const t = await m.startTracing(${cfg}, 'test', ${quiet}); await t.shutdown();`);
    expect(loaded).to.include.members(['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto']);
  });
});
