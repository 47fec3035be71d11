/**
 * The bench's scenarios, in the order a run takes them: the request scenarios and the others
 * that need the service running on the seeded data set, then those that start services of their
 * own on it, then those on indices of their own. Each is {name, run, table}: bench/run.ts seeds,
 * starts the service, runs what the command line selects and writes every result under its name.
 */
import { aliasName } from '../src/store/client.js';
import { consoleBench, consoleTable, consoleTargets, type ConsoleResult } from './console.js';
import { createBench, createTable, createTargets, type CreateResult } from './create.js';
import { exportBench, exportTable, exportTargets, type ExportResult } from './export.js';
import { jobsBench, jobsTable, type JobsResult } from './jobs.js';
import { cannon, fromCannon } from './measure.js';
import { migrationBench, type MigrationResult } from './migration.js';
import { orgCreateBench, orgCreateInTree, orgCreateTable, orgCreateTargets, type OrgCreateInTree, type OrgCreateResult } from './org-create.js';
import { overloadBench, overloadTable, type OverloadResult } from './overload.js';
import { overviewBench, overviewTable, overviewTargets, type OverviewResult } from './overview.js';
import { resultsTable, type ScenarioResult } from './report.js';
import { requestScenarios } from './request-rounds.js';
import { DISTRIBUTOR } from './seed.js';
import { scenario, staged, type BenchScenario } from './stage.js';
import { tracingBench, tracingTable, type TracingResult } from './tracing.js';
import { rolloutBench, rolloutEndpoints, rolloutTable, type RolloutBenchResult } from './rollout.js';

export const REGISTRY: readonly BenchScenario<unknown>[] = [
  scenario<ScenarioResult[]>({
    name: 'results',
    phase: 'service',
    wanted: (s) => s.scenarios,
    run: (bench, stage) => requestScenarios(bench, staged(stage, 'results')),
    table: (results, all) => resultsTable(results, all.migration as MigrationResult | undefined),
  }),
  scenario<OverloadResult>({
    name: 'overload',
    phase: 'service',
    wanted: (s) => s.overload,
    title: 'Overload',
    run: async (bench, stage) => {
      const { seeded, root, serviceEnv } = staged(stage, 'overload');
      await bench.settle();
      const { client, esPid, log, opts } = bench;
      return overloadBench({ client, prefix: opts.prefix, runtime: opts.runtime, serviceEnv, admin: opts.admin, esPid, root, agentIds: seeded.agentIds, quick: opts.quick, log });
    },
    table: (r) => overloadTable(r),
  }),
  scenario<CreateResult>({
    name: 'create',
    phase: 'service',
    wanted: (s) => s.create,
    run: (bench, stage) => {
      const { svc, root } = staged(stage, 'create');
      const { opts } = bench;
      return createBench({
        client: bench.client,
        prefix: opts.prefix,
        serviceUrl: svc.url,
        token: opts.admin,
        orgId: root,
        connections: opts.connections,
        roundS: opts.roundS,
        rounds: opts.rounds,
        settle: () => bench.settle(),
        log: bench.log,
      });
    },
    table: (r) => createTable(r),
    targets: (r) => createTargets(r),
  }),
  scenario<OverviewResult>({
    name: 'overview',
    phase: 'service',
    wanted: (s) => s.overview,
    run: async (bench, stage) => {
      const { svc, root } = staged(stage, 'overview');
      await bench.settle();
      const { opts } = bench;
      return overviewBench({ serviceUrl: svc.url, adminToken: opts.admin, root, viewers: 8, roundS: opts.roundS, warmupS: opts.warmupS, log: bench.log });
    },
    table: (r) => overviewTable(r),
    targets: (r) => overviewTargets(r),
  }),
  scenario<OverviewResult>({
    name: 'overviewDistributor',
    phase: 'service',
    wanted: (s) => s.overview,
    run: async (bench, stage) => {
      const { svc } = staged(stage, 'overviewDistributor');
      await bench.settle();
      const { opts } = bench;
      return overviewBench({ serviceUrl: svc.url, adminToken: opts.admin, root: DISTRIBUTOR, viewers: 8, roundS: opts.roundS, warmupS: opts.warmupS, log: bench.log });
    },
    targets: (r) => overviewTargets(r, 'distributor '),
  }),
  scenario<OrgCreateInTree>({
    name: 'orgCreateAtSize',
    phase: 'service',
    wanted: (s) => s.orgCreateTree,
    run: async (bench, stage) => {
      const { svc } = staged(stage, 'orgCreateAtSize');
      await bench.settle();
      // Into the seeded tree (all of the size's organizations), below one of the distributor's customers.
      return orgCreateInTree({
        serviceUrl: svc.url,
        token: bench.opts.admin,
        parent: `${DISTRIBUTOR}-r0-c0`,
        creates: 200,
        organizations: (await bench.client.count({ index: aliasName(bench.opts.prefix, 'organizations') })).count,
        log: bench.log,
      });
    },
    targets: (r) => [{ target: `org-create into ${r.organizations} organizations: p50 ≤ 30 ms`, measured: `${r.p50} ms`, met: r.p50 <= 30 }],
  }),
  scenario<ConsoleResult | { error: string }>({
    name: 'console',
    phase: 'service',
    wanted: (s) => s.console,
    run: async (bench, stage) => {
      const { svc, root } = staged(stage, 'console');
      await bench.settle();
      // The operator console in Chromium; a missing browser is reported, not fatal.
      return consoleBench({ serviceUrl: svc.url, adminToken: bench.opts.admin, root, loads: 10, log: bench.log }).catch((e: unknown) => {
        bench.log(`console: not measured: ${String(e)}`);
        return { error: String(e) };
      });
    },
    table: (r) => ('error' in r ? '' : consoleTable(r)),
    targets: (r) => ('error' in r ? [] : consoleTargets(r)),
  }),
  scenario<ExportResult>({
    name: 'export',
    phase: 'service',
    wanted: (s) => s.export,
    run: async (bench, stage) => {
      const { svc, root } = staged(stage, 'export');
      await bench.settle();
      return exportBench({ client: bench.client, prefix: bench.opts.prefix, serviceUrl: svc.url, servicePid: svc.pid, adminToken: bench.opts.admin, root, log: bench.log });
    },
    table: (r) => exportTable(r),
    targets: (r) => exportTargets(r),
  }),
  scenario<TracingResult>({
    name: 'tracing',
    phase: 'seeded',
    wanted: (s) => s.tracing,
    title: 'Traces',
    run: (bench, stage) => {
      const { every, serviceEnv, callers } = staged(stage, 'tracing');
      const { opts } = bench;
      return tracingBench({
        runtime: opts.runtime,
        serviceEnv,
        scenarios: every.filter((sc) => sc.name === 'connect' || sc.name.startsWith('page-search')),
        rounds: opts.quick ? 3 : 4,
        roundSeconds: opts.roundS,
        warmupSeconds: opts.warmupS,
        drive: (url, sc, seconds) => cannon(url, opts.connections, callers, sc, seconds),
        fromCannon,
        log: bench.log,
      });
    },
    table: (r) => tracingTable(r),
  }),
  // Last on the data set: the job writes a module record for every agent.
  scenario<JobsResult>({
    name: 'jobs',
    phase: 'seeded',
    wanted: (s) => s.jobs,
    title: 'Bulk actions as jobs',
    run: async (bench, stage) => {
      const { seeded, serviceEnv } = staged(stage, 'jobs');
      await bench.settle();
      const { opts } = bench;
      return jobsBench({ runtime: opts.runtime, serviceEnv, admin: opts.admin, agentIds: seeded.agentIds, quick: opts.quick, log: bench.log });
    },
    table: (r) => jobsTable(r),
  }),
  scenario<OrgCreateResult>({
    name: 'orgCreate',
    phase: 'alone',
    wanted: (s) => s.orgCreate,
    title: 'Organization creates (org-create)',
    // Its own indices (a prefix that does not extend the data set's), empty at the start.
    run: (bench) =>
      orgCreateBench({ client: bench.client, esUrl: bench.esUrl, esPid: bench.esPid, prefix: `${bench.opts.prefix}org`, runtime: bench.opts.runtime, quick: bench.opts.quick, log: bench.log }),
    table: (r) => orgCreateTable(r),
    targets: (r) => orgCreateTargets(r),
  }),
  scenario<MigrationResult>({
    name: 'migration',
    phase: 'alone',
    wanted: (s) => s.migration,
    run: (bench) =>
      migrationBench({ client: bench.client, esUrl: bench.esUrl, esPid: bench.esPid, prefix: bench.opts.prefix, config: bench.config, size: bench.opts.size, log: bench.log }),
  }),
  scenario<RolloutBenchResult>({
    name: 'rollout',
    phase: 'alone',
    wanted: (s) => s.rollout,
    title: 'Rollout of an agent version (rollout)',
    // An in-process service on indices of its own: rings sent and judged, and the ring work's store requests per endpoint.
    run: (bench) => rolloutBench({ esUrl: bench.esUrl, endpoints: rolloutEndpoints(bench.opts.quick), log: bench.log }),
    table: (r) => rolloutTable(r),
  }),
];
