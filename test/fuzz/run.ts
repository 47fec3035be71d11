/**
 * `npm run fuzz`: many generated cases per operation of the served OpenAPI document against
 * a real app (started like the tests start it, under its own index prefix, dropped at the
 * end). Prints cases per operation and status, the failures, and exits 1 when any case broke
 * an invariant.
 *
 *   npm run fuzz -- [--runs 200] [--seed 42] [--only <text in "METHOD /path">]
 *   FUZZ_RUNS, FUZZ_SEED and FUZZ_ONLY do the same; ELASTICSEARCH_URL picks the node.
 */
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN, RUN_PREFIX, startTestApp } from '../helpers/app.js';
import { dropIndicesUnder, stopTestElasticsearch } from '../helpers/elasticsearch.js';
import { buildStockedOrg } from '../helpers/stocked-org.js';
import { fuzz, type OperationStats } from './fuzz.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: process.env.FUZZ_RUNS ?? '200' },
    seed: { type: 'string', default: process.env.FUZZ_SEED ?? String(Date.now() % 2 ** 31) },
    only: { type: 'string', default: process.env.FUZZ_ONLY },
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run fuzz -- [--runs N≥1] [--seed integer] [--only text]');
  process.exit(2);
}

const prefix = `${RUN_PREFIX}-fuzz`;

const dropIndices = (): Promise<void> => dropIndicesUnder(prefix);

function statusLine(s: OperationStats): string {
  const statuses = Object.entries(s.byStatus)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([k, v]) => `${k}×${v}`)
    .join(' ');
  const valid = s.valid.cases > 0 ? `  (valid ${s.valid.ok}/${s.valid.cases} 2xx)` : '';
  return `${s.operation.padEnd(82)} ${String(s.cases).padStart(6)}  ${statuses}${valid}${s.failedCases > 0 ? `  FAILED ${s.failedCases}` : ''}`;
}

async function main(): Promise<number> {
  const t = await startTestApp({ ECS_INDEX_PREFIX: prefix, LOG_LEVEL: 'warn' });
  // Interrupted: still drop the run's indices.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: dropping ${prefix}-* and stopping`);
      void t
        .close()
        .then(dropIndices)
        .finally(() => process.exit(130));
    });
  }
  const started = Date.now();
  try {
    const fixture = await buildStockedOrg(t);
    const scoped = await t.world.token('admin', fixture.orgId);
    console.log(`fuzzing ${t.url} with ${runs} cases per operation, seed ${seed}${values.only ? `, only "${values.only}"` : ''}\n`);
    console.log(`${'operation'.padEnd(82)} ${'cases'.padStart(6)}  statuses`);
    const stats = await fuzz(
      { url: t.url, openapi: t.server.handle.openapi, tokens: { system: ADMIN_TOKEN, scoped }, known: fixture.params },
      runs,
      seed,
      { only: values.only ? (op) => op.includes(values.only as string) : undefined, onOperation: (s) => console.log(statusLine(s)) },
    );
    const live = await fetch(`${t.url}/health/live`);
    const cases = stats.reduce((n, s) => n + s.cases, 0);
    const failed = stats.reduce((n, s) => n + s.failedCases, 0);
    const byClass: Record<string, number> = {};
    for (const s of stats) for (const [k, v] of Object.entries(s.byStatus)) byClass[`${k[0]}xx`] = (byClass[`${k[0]}xx`] ?? 0) + v;
    console.log(
      `\n${cases} cases over ${stats.length} operations in ${Math.round((Date.now() - started) / 1000)} s (seed ${seed}); ` +
        `${Object.entries(byClass)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}; process ${live.status === 200 ? 'up' : `answers ${live.status}`}; ${failed} failing cases`,
    );
    for (const s of stats) for (const f of s.failures) console.log(`  ✗ ${f}`);
    if (process.env.FUZZ_VERBOSE) {
      console.log('\nschema-valid cases with the system token answered 400 (the document is looser than the service):');
      for (const s of stats) for (const r of s.valid.rejected) console.log(`  ${s.operation}: ${r}`);
    }
    return failed > 0 || live.status !== 200 ? 1 : 0;
  } finally {
    await t.close();
    await dropIndices();
    await stopTestElasticsearch();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
