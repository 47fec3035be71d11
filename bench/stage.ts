/** What the bench's scenarios run against: the cluster, and (for most) the seeded data set with the service running. */
import type { Client } from '@elastic/elasticsearch';
import type { Config } from '../src/config.js';
import type { Services } from '../src/container.js';
import type { Callers } from './measure.js';
import type { BenchOptions, Selection } from './options.js';
import type { TargetResult } from './report.js';
import type { Scenario } from './scenario.js';
import type { Seeded } from './seed.js';
import type { ServiceProcess } from './service-process.js';

/** The run as a whole: its options and the cluster. */
export interface Bench {
  opts: BenchOptions;
  config: Config;
  client: Client;
  esUrl: string;
  esPid: number | undefined;
  log: (line: string) => void;
  /** Waits until Elasticsearch has finished the background work earlier load left. */
  settle(): Promise<number>;
}

/** The seeded data set, and the service under test while it runs. */
export interface Stage {
  services: Services;
  seeded: Seeded;
  root: string;
  subtree: string[];
  /** Every request scenario of the data set (the bare hop numbers them by their place here). */
  every: Scenario[];
  serviceEnv: Record<string, string>;
  svc: ServiceProcess;
  callers: Callers;
  /** Under `--profile`: where the bare hop writes its CPU profile (the service's is beside it). */
  hopProfileDir?: string;
}

/** Every scenario's result so far, by scenario name. */
export type Results = Readonly<Record<string, unknown>>;

/**
 * One scenario of the registry (bench/registry.ts). `phase` says what it needs: `service`, the
 * seeded data set with the service running; `seeded`, the data set once that service stopped
 * (scenarios that start services of their own); `alone`, nothing but the cluster (own indices).
 */
export interface BenchScenario<T> {
  name: string;
  phase: 'service' | 'seeded' | 'alone';
  wanted(select: Selection): boolean;
  run(bench: Bench, stage: Stage | undefined): Promise<T>;
  /** The markdown table of its result; with `title`, printed under that title after the targets. */
  table?(result: T, all: Results): string;
  title?: string;
  targets?(result: T): TargetResult[];
}

/** Erases a scenario's result type for the registry's list (each scenario is typed where it is declared). */
export function scenario<T>(s: BenchScenario<T>): BenchScenario<unknown> {
  return s as BenchScenario<unknown>;
}

/** The stage a `service` or `seeded` scenario runs on. */
export function staged(stage: Stage | undefined, name: string): Stage {
  if (!stage) throw new Error(`${name} runs on the seeded data set`);
  return stage;
}
