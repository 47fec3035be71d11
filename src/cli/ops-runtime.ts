/**
 * What every ops command shares: its arguments (parsed once, checked before anything is
 * opened), the runtime it runs in (configuration, store, services, a system Access) and the
 * formatting of its numbers.
 */
import os from 'node:os';
import { parseArgs as parseCommandLine } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { assertKnownIndices } from '../start-checks.js';
import { createLogger, type Logger } from '../log.js';
import { Access } from '../access/access.js';
import { createClient, storeAccessFailure, type StoreContext } from '../store/client.js';
import { ensureIndices } from '../store/index-setup.js';
import { createServices, type Services } from '../container.js';
import { startLocalNode, type LocalNode } from '../dev/local-elasticsearch.js';
import type { ProgressStream } from './progress.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, conflict: 3 } as const;

export interface CliIo {
  out: { write(s: string): unknown };
  err: ProgressStream;
  env: NodeJS.ProcessEnv;
}

export class UsageError extends Error {}

export interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

const OPTIONS = {
  'batch-size': { type: 'string' },
  parent: { type: 'string' },
  role: { type: 'string' },
  org: { type: 'string' },
  endpoint: { type: 'string' },
  name: { type: 'string' },
  expires: { type: 'string' },
  json: { type: 'boolean' },
  email: { type: 'string' },
  subject: { type: 'string' },
  all: { type: 'boolean' },
  force: { type: 'boolean' },
  restart: { type: 'boolean' },
  'delete-old': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function parseArgs(argv: string[]): Parsed {
  try {
    const { values, positionals } = parseCommandLine({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    const flags = new Map<string, string | true>();
    for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== false) flags.set(k, v);
    return { positional: positionals, flags };
  } catch (err) {
    // node:util's messages name the option and what is wrong with it (unknown, missing value).
    throw new UsageError((err as Error).message);
  }
}

/**
 * A flag another command takes is as much a mistake here as an unknown one (a `--force` given
 * to migrate would otherwise be silently ignored): usage error, exit 2.
 */
export function onlyFlags(p: Parsed, command: string, allowed: readonly string[]): void {
  const stray = [...p.flags.keys()].filter((k) => k !== 'help' && !allowed.includes(k));
  if (stray.length > 0) {
    const takes = allowed.length > 0 ? `; it takes ${allowed.map((k) => `--${k}`).join(', ')}` : '; it takes none';
    throw new UsageError(`${command} does not take ${stray.map((k) => `--${k}`).join(', ')}${takes}`);
  }
}

export function flag(p: Parsed, k: string): string | undefined {
  const v = p.flags.get(k);
  return typeof v === 'string' ? v : undefined;
}

export function batchSize(p: Parsed): number | undefined {
  const v = flag(p, 'batch-size');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError('--batch-size must be an integer from 1 to 10000');
  return n;
}

/** What a command needs: configuration, the store, the services; closed by `close`. */
export interface Runtime {
  config: Config;
  log: Logger;
  store: StoreContext;
  services: Services;
  access: Access;
  close(): Promise<void>;
}

export async function startRuntime(io: CliIo): Promise<Runtime> {
  const config = loadConfig(io.env);
  assertKnownIndices(config);
  const log = createLogger(io.env.LOG_LEVEL ? config.logLevel : 'warn', { write: (s: string) => void io.err.write(s) }, config.logFormat);
  let node: LocalNode | undefined;
  let url = config.elasticsearchUrl;
  if (!url) {
    // As `npm start`: the managed local node (reused when it is running).
    node = await startLocalNode({ name: 'dev', port: Number(io.env.ECS_LOCAL_ES_PORT ?? 0), log: (l) => log.info(l) });
    url = node.url;
  }
  const store: StoreContext = {
    client: createClient(url, config.storeTimeoutMs, config.elasticsearchSecurity),
    prefix: config.indexPrefix,
    layout: config.indexLayout,
    refresh: 'shared',
  };
  await ensureIndices(store, log).catch(async (err: unknown) => {
    await store.client.close().catch(() => undefined);
    if (node?.started) await node.stop();
    throw storeAccessFailure(err, config.elasticsearchSecurity) ?? err;
  });
  const services = createServices({ config, store, log });
  const access = new Access({ role: 'system', name: `ops-cli:${os.userInfo().username}` }, services.orgs);
  return {
    config,
    log,
    store,
    services,
    access,
    close: async () => {
      await services.deviceMigration.close().catch(() => undefined);
      await store.client.close().catch(() => undefined);
      if (node?.started) await node.stop();
    },
  };
}

export const fmt = (n: number): string => n.toLocaleString('en-US');
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export interface Command {
  /** Validates the arguments before anything is opened (usage errors exit 2 at once). */
  check(p: Parsed): void;
  run(rt: Runtime, p: Parsed, io: CliIo): Promise<number>;
}
