/** The bench's command line: the size, the round lengths, and which scenarios a run selects (bench/run.ts). */
import crypto from 'node:crypto';
import { QUICK, sizeNamed, type SeedSize } from './seed.js';
import type { Runtime } from './service-process.js';

/** Which scenarios a run selects: none named runs them all; request scenarios are chosen by name prefix. */
export interface Selection {
  migration: boolean;
  overload: boolean;
  jobs: boolean;
  orgCreate: boolean;
  /** Organization creates into the seeded tree (its full size), on the running service. */
  orgCreateTree: boolean;
  /** Traces off against on at 10 % (and against BENCH_BEFORE_DIR's build): only when asked. */
  tracing: boolean;
  /** An agent-version rollout over BENCH_ROLLOUT_ENDPOINTS endpoints (bench/rollout.ts): only when asked. */
  rollout: boolean;
  /** The request scenarios run at all (org-create-tree runs on their service). */
  scenarios: boolean;
  /** Name prefixes of the request scenarios asked for (none: every one). */
  scenarioFilter: string[];
  create: boolean;
  overview: boolean;
  console: boolean;
  export: boolean;
}

export interface BenchOptions {
  quick: boolean;
  size: SeedSize;
  /** Seed the size and stop (its time in bench/results/<date>-seed-<size>.json); later runs take --reuse. */
  seedOnly: boolean;
  /** Without the direct equivalents' rounds (the bare hop still runs): a shorter run for the curve across sizes. */
  noDirect: boolean;
  reuse: boolean;
  profile: boolean;
  runtime: Runtime;
  select: Selection;
  connections: number;
  roundS: number;
  warmupS: number;
  rounds: number;
  /**
   * One prefix per size (no prefix extends another's, so `<prefix>-*` never reaches another size's
   * indices): the three sizes coexist on one node. BENCH_INDEX_PREFIX replaces it.
   */
  prefix: string;
  /** The bootstrap admin token the service under test is started with. */
  admin: string;
}

const NAMED = ['migration', 'overload', 'jobs', 'org-create', 'org-create-tree', 'tracing', 'rollout'];
const CREATE_SCENARIOS = ['create-sequential', 'create-concurrent'];

function selection(only: string[]): Selection {
  const all = only.length === 0;
  const orgCreateTree = all || only.includes('org-create-tree');
  const scenarioFilter = only.filter((o) => !NAMED.includes(o));
  const scenarios = all || scenarioFilter.length > 0 || orgCreateTree;
  const prefixed = (name: string): boolean => scenarios && (scenarioFilter.length === 0 || scenarioFilter.some((o) => name.startsWith(o)));
  return {
    migration: all || only.includes('migration'),
    overload: all || only.includes('overload'),
    jobs: all || only.includes('jobs'),
    orgCreate: all || only.includes('org-create'),
    orgCreateTree,
    tracing: only.includes('tracing'),
    rollout: only.includes('rollout'),
    scenarios,
    scenarioFilter,
    create: scenarios && (scenarioFilter.length === 0 || CREATE_SCENARIOS.some((n) => scenarioFilter.some((o) => n.startsWith(o)))),
    overview: prefixed('overview'),
    console: prefixed('console'),
    export: prefixed('export'),
  };
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const args = [...argv];
  const quick = args.includes('--quick');
  const sizeAt = args.indexOf('--size');
  const sizeArg = sizeAt >= 0 ? args[sizeAt + 1] : undefined;
  if (sizeAt >= 0) args.splice(sizeAt, 2);
  const size = quick ? QUICK : sizeNamed(sizeArg ?? '140k');
  const short = quick || args.includes('--short');
  return {
    quick,
    size,
    seedOnly: args.includes('--seed-only'),
    noDirect: args.includes('--no-direct'),
    reuse: args.includes('--reuse'),
    profile: args.includes('--profile'),
    runtime: args.includes('--tsx') ? 'tsx' : 'dist',
    select: selection(args.filter((a) => !a.startsWith('--'))),
    connections: 64,
    roundS: short ? 5 : 10,
    warmupS: short ? 2 : 3,
    // At least three alternated rounds of each side, so a table can show their spread.
    rounds: 3,
    prefix: env.BENCH_INDEX_PREFIX ?? `ecs-bench${size.slug}`,
    admin: `bench-${crypto.randomBytes(12).toString('hex')}`,
  };
}

export const log = (l: string): void => console.error(`[bench] ${new Date().toISOString().slice(11, 19)} ${l}`);
