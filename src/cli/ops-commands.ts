/**
 * The ops toolkit (`npm run ops -- <command>`), sharing the service's code: the same
 * configuration, store layer, services and migration as the HTTP operations. Human output
 * on stdout (or one JSON document with --json), progress on stderr, logs (warnings and up)
 * on stderr. Exit codes: 0 done (or nothing to do), 1 failed, 2 usage error, 3 conflict
 * (a run of the same work is in progress, or a leftover needs --restart).
 */
import os from 'node:os';
import { parseArgs as parseCommandLine } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { Access, ROLES, type Role } from '../http/auth.js';
import { AppError, ConflictError } from '../errors.js';
import { createClient, storeAccessFailure, StoreAccessError, type StoreContext } from '../store/client.js';
import { ensureIndices } from '../store/indices.js';
import { reindexableIndices, type ReindexResult } from '../store/reindex.js';
import { reindexUnderLease } from '../store/schema.js';
import { createServices, type Services } from '../resources/index.js';
import { stampAncestry, unstampedCount } from '../resources/organizations/ancestry-migration.js';
import { DEVICE_FAMILIES, type DeviceFamily } from '../migration/device-rows.js';
import { startLocalNode, type LocalNode } from '../dev/local-elasticsearch.js';
import { ProgressBar, type ProgressStream } from './progress.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, conflict: 3 } as const;

export interface CliIo {
  out: { write(s: string): unknown };
  err: ProgressStream;
  env: NodeJS.ProcessEnv;
}

export const USAGE = `usage: npm run ops -- <command>

  migrate utm|lte [--batch-size N] [--json]
      copy every UTM (or LTE) endpoint record into PostgreSQL (DATABASE_URL), as
      GET /device-migration/utm-devices does; resumable, a second run copies only changes
  reindex <index> [--force] [--restart] [--delete-old] [--batch-size N] [--json]
      copy <index> into a new generation built from its current template and swap the
      alias; a no-op when the mapping is current (--force: reindex anyway; --restart: drop
      the leftover of an interrupted run; --delete-old: delete the old generation)
  org-paths [--json]
      give every org-scoped record written before records carried it the ancestry of its
      organization (subtree searches find only records that have it); resumable, a second
      run stamps only what is still missing
  sessions list [--email <e-mail> | --subject <sub>] [--json]
      the live login sessions of people signed in through single sign-on: who, grants,
      since when, last use, when they end
  sessions end --email <e-mail> | --subject <sub> | --all [--json]
      end them on every instance at once, audited (when the identity provider cannot)
  admin org create <id> <name> [--parent <orgId>]
  admin org show <id>
  admin token create --role system|admin|reader|agent [--org <orgId>] [--endpoint <id>]
                     [--name <name>] [--expires <ISO date>]
  admin token revoke <tokenId>

  npm run admin -- <org|token> ... is the same as npm run ops -- admin <org|token> ...
Environment: ELASTICSEARCH_URL, ECS_INDEX_PREFIX, DATABASE_URL, ECS_SQL_SCHEMA (as the service).
Exit codes: 0 done, 1 failed, 2 usage, 3 conflict (already running).`;

class UsageError extends Error {}

interface Parsed {
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

function parseArgs(argv: string[]): Parsed {
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
function onlyFlags(p: Parsed, command: string, allowed: readonly string[]): void {
  const stray = [...p.flags.keys()].filter((k) => k !== 'help' && !allowed.includes(k));
  if (stray.length > 0) {
    const takes = allowed.length > 0 ? `; it takes ${allowed.map((k) => `--${k}`).join(', ')}` : '; it takes none';
    throw new UsageError(`${command} does not take ${stray.map((k) => `--${k}`).join(', ')}${takes}`);
  }
}

function flag(p: Parsed, k: string): string | undefined {
  const v = p.flags.get(k);
  return typeof v === 'string' ? v : undefined;
}

function batchSize(p: Parsed): number | undefined {
  const v = flag(p, 'batch-size');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError('--batch-size must be an integer from 1 to 10000');
  return n;
}

/** What a command needs: configuration, the store, the services; closed by `close`. */
interface Runtime {
  config: Config;
  log: Logger;
  store: StoreContext;
  services: Services;
  access: Access;
  close(): Promise<void>;
}

async function startRuntime(io: CliIo): Promise<Runtime> {
  const config = loadConfig(io.env);
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

const fmt = (n: number): string => n.toLocaleString('en-US');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function checkMigrate(p: Parsed): void {
  if (!DEVICE_FAMILIES.includes(p.positional[1] as DeviceFamily) || p.positional.length !== 2) {
    throw new UsageError('migrate needs utm or lte');
  }
  onlyFlags(p, 'migrate', ['batch-size', 'json']);
  batchSize(p);
}

async function migrate(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const family = p.positional[1] as DeviceFamily;
  const label = `migrate ${family}`;
  const bar = new ProgressBar(label, 0, io.err);
  const started = Date.now();
  const counts = await rt.services.deviceMigration.migrate(family, {
    batchSize: batchSize(p),
    onProgress: (pr) => {
      if (pr.batches === 1) bar.phase(label, pr.total);
      bar.update(pr.sourceCount, `written ${fmt(pr.destCount)}, ignored ${fmt(pr.ignoredCount)}`);
    },
  });
  const elapsedMs = Date.now() - started;
  bar.finish(counts.sourceCount, `written ${fmt(counts.destCount)}, ignored ${fmt(counts.ignoredCount)}`);
  if (p.flags.has('json')) {
    io.out.write(`${JSON.stringify({ command: 'migrate', family, ...counts, elapsedMs })}\n`);
  } else {
    const w = Math.max(...[counts.sourceCount, counts.destCount, counts.ignoredCount].map((n) => fmt(n).length));
    io.out.write(
      `${family.toUpperCase()} device migration finished in ${seconds(elapsedMs)}\n` +
        `  source records  ${fmt(counts.sourceCount).padStart(w)}\n` +
        `  rows written    ${fmt(counts.destCount).padStart(w)}\n` +
        `  ignored         ${fmt(counts.ignoredCount).padStart(w)}  (unchanged since migrated, or deleted)\n`,
    );
  }
  return EXIT.ok;
}

function reindexSummary(r: ReindexResult, elapsedMs: number): string {
  if (r.status === 'current') {
    return `reindex ${r.index}: ${r.from} already has the current mapping (version ${r.fromVersion}); nothing to do\n`;
  }
  return (
    `reindex ${r.index}: ${r.from} (mapping version ${r.fromVersion}) -> ${r.to} (version ${r.templateVersion}) in ${seconds(elapsedMs)}\n` +
    `  copied           ${fmt(r.copied)}\n` +
    `  caught up        ${fmt(r.caughtUp)}  (written during the copy; ${r.catchUpRounds} live round${r.catchUpRounds === 1 ? '' : 's'} + the final one)\n` +
    `  removed          ${fmt(r.removed)}  (deleted during the copy)\n` +
    `  documents        ${fmt(r.documents)}\n` +
    `  writes blocked   ${r.writeBlockedMs} ms\n` +
    `  alias            ${r.alias} -> ${r.to}\n` +
    (r.oldIndex === 'deleted'
      ? `  old index        ${r.from} deleted\n`
      : `  old index        ${r.from} kept, read-only; delete it once satisfied: curl -XDELETE "$ELASTICSEARCH_URL/${r.from}"\n`)
  );
}

function checkReindex(p: Parsed): void {
  const name = p.positional[1];
  if (!name || p.positional.length !== 2) throw new UsageError(`reindex needs one index: ${reindexableIndices().join(', ')}`);
  if (!reindexableIndices().includes(name)) throw new UsageError(`unknown index ${name}; known: ${reindexableIndices().join(', ')}`);
  onlyFlags(p, 'reindex', ['batch-size', 'json', 'force', 'restart', 'delete-old']);
  batchSize(p);
}

async function reindexCommand(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const name = p.positional[1];
  const bar = new ProgressBar(`reindex ${name} copy`, 0, io.err);
  let phase = '';
  const started = Date.now();
  // The services' context: records of org-scoped indices are copied with their organization's ancestry.
  const result = await reindexUnderLease(rt.services.storeContext, name, `ops-cli:${os.hostname()}:${process.pid}`, {
    force: p.flags.has('force'),
    restart: p.flags.has('restart'),
    deleteOld: p.flags.has('delete-old'),
    batchSize: batchSize(p),
    onProgress: (pr) => {
      if (pr.phase !== phase) {
        phase = pr.phase;
        bar.phase(`reindex ${name} ${pr.phase}`, pr.phase === 'copy' ? pr.total : pr.copied);
      }
      bar.update(pr.copied);
    },
  });
  const elapsedMs = Date.now() - started;
  if (phase !== '') {
    bar.phase(`reindex ${name}`, result.documents);
    bar.finish(result.documents, 'alias swapped');
  }
  if (p.flags.has('json')) io.out.write(`${JSON.stringify({ command: 'reindex', ...result, elapsedMs })}\n`);
  else io.out.write(reindexSummary(result, elapsedMs));
  return EXIT.ok;
}

function expiresAt(p: Parsed): Date | undefined {
  const expires = flag(p, 'expires');
  const at = expires ? new Date(expires) : undefined;
  if (at && (Number.isNaN(at.getTime()) || at.getTime() <= Date.now())) throw new UsageError('--expires must be an ISO date in the future');
  return at;
}

function checkAdmin(p: Parsed): void {
  const [, what, verb, ...rest] = p.positional;
  const sub = `${what ?? ''} ${verb ?? ''}`;
  if (sub === 'org create' && (rest.length < 2)) throw new UsageError('admin org create <id> <name> [--parent <orgId>]');
  else if (sub === 'org show' && rest.length !== 1) throw new UsageError('admin org show <id>');
  else if (sub === 'token create') {
    const role = flag(p, 'role') as Role | undefined;
    if (!role || !ROLES.includes(role) || rest.length !== 0) {
      throw new UsageError('admin token create --role system|admin|reader|agent [--org <orgId>] [--endpoint <id>] [--name <name>] [--expires <ISO date>]');
    }
    expiresAt(p);
  } else if (sub === 'token revoke' && rest.length !== 1) throw new UsageError('admin token revoke <tokenId>');
  else if (!['org create', 'org show', 'token create', 'token revoke'].includes(sub)) {
    throw new UsageError('admin org create|show, admin token create|revoke');
  }
  const takes: Record<string, string[]> = {
    'org create': ['parent'],
    'org show': [],
    'token create': ['role', 'org', 'endpoint', 'name', 'expires'],
    'token revoke': [],
  };
  onlyFlags(p, `admin ${sub}`, takes[sub]);
}

async function admin(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const [, what, verb, ...rest] = p.positional;
  const print = (v: unknown): void => void io.out.write(`${JSON.stringify(v, null, 2)}\n`);
  if (what === 'org' && verb === 'create') {
    const [id, ...name] = rest;
    const parentId = flag(p, 'parent');
    print(await rt.services.orgs.create({ id, name: name.join(' '), ...(parentId ? { parentId } : {}) }, rt.access));
    return EXIT.ok;
  }
  if (what === 'org' && verb === 'show') {
    print(await rt.services.orgs.get(rest[0], rt.access));
    return EXIT.ok;
  }
  if (what === 'token' && verb === 'create') {
    const role = flag(p, 'role') as Role;
    const expires = expiresAt(p);
    const orgId = flag(p, 'org');
    const endpointId = flag(p, 'endpoint');
    print(
      await rt.services.tokens.create(
        {
          name: flag(p, 'name') ?? `${role}${orgId ? `-${orgId}` : ''}`,
          role,
          ...(orgId ? { orgId } : {}),
          ...(endpointId ? { endpointId } : {}),
          ...(expires ? { expiresAt: expires } : {}),
        },
        rt.access,
      ),
    );
    return EXIT.ok;
  }
  if (what === 'token' && verb === 'revoke') {
    await rt.services.tokens.revoke(rest[0], rt.access);
    io.out.write(`revoked token ${rest[0]}\n`);
    return EXIT.ok;
  }
  throw new UsageError('admin org create|show, admin token create|revoke');
}

async function orgPaths(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const started = Date.now();
  const before = await unstampedCount(rt.services.storeContext);
  const bar = new ProgressBar('org-paths', before, io.err);
  const stamped = await stampAncestry(rt.services.storeContext, (n) => bar.update(n, ''));
  const left = await unstampedCount(rt.services.storeContext, { refresh: true });
  bar.finish(stamped, '');
  const elapsedMs = Date.now() - started;
  if (p.flags.has('json')) io.out.write(`${JSON.stringify({ command: 'org-paths', found: before, stamped, left, elapsedMs })}\n`);
  else io.out.write(`org-paths: ${fmt(stamped)} records given their organization's ancestry in ${seconds(elapsedMs)}; ${fmt(left)} left\n`);
  return left === 0 ? EXIT.ok : EXIT.failed;
}

function checkSessions(p: Parsed): void {
  const [, verb, ...rest] = p.positional;
  const who = ['email', 'subject', 'all'].filter((k) => p.flags.has(k));
  if (verb === 'list' && rest.length === 0 && who.length <= 1 && !p.flags.has('all')) {
    onlyFlags(p, 'sessions list', ['email', 'subject', 'json']);
    return;
  }
  if (verb === 'end' && rest.length === 0 && who.length === 1) {
    onlyFlags(p, 'sessions end', ['email', 'subject', 'all', 'json']);
    return;
  }
  throw new UsageError('sessions list [--email <e-mail> | --subject <sub>], sessions end --email <e-mail> | --subject <sub> | --all');
}

async function sessionsCommand(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const verb = p.positional[1];
  const email = flag(p, 'email');
  const subject = flag(p, 'subject');
  const found = await rt.services.sessions.list({ ...(email !== undefined ? { email } : {}), ...(subject !== undefined ? { subject } : {}) });
  // A session is named as in the audit trail: the first 16 characters of its hash.
  const rows = found.map((s) => ({
    id: s.hash.slice(0, 16),
    subject: s.doc.subject,
    issuer: s.doc.issuer,
    ...(s.doc.email ? { email: s.doc.email } : {}),
    ...(s.doc.name ? { name: s.doc.name } : {}),
    grants: s.doc.grants.map((g) => `${g.role}@${g.orgId ?? '*'}`),
    createdAt: s.doc.createdAt,
    lastSeenAt: s.doc.lastSeenAt,
    expiresAt: s.expiresAt,
  }));
  if (verb === 'list') {
    if (p.flags.has('json')) io.out.write(`${JSON.stringify({ command: 'sessions list', sessions: rows })}\n`);
    else {
      for (const r of rows) io.out.write(`${r.id}  ${r.name ?? r.email ?? r.subject}  ${r.grants.join(',')}  since ${r.createdAt}  last use ${r.lastSeenAt}  ends ${r.expiresAt}\n`);
      io.out.write(`${fmt(rows.length)} live login sessions\n`);
    }
    return EXIT.ok;
  }
  const ended = await rt.services.sessions.endByOperator(
    found.map((s) => s.hash),
    { requestId: `ops-${process.pid}`, method: 'CLI', path: 'ops sessions end' },
  );
  if (p.flags.has('json')) io.out.write(`${JSON.stringify({ command: 'sessions end', ended, sessions: rows.map((r) => r.id) })}\n`);
  else io.out.write(`sessions end: ${fmt(ended)} login sessions ended on every instance\n`);
  return EXIT.ok;
}

interface Command {
  /** Validates the arguments before anything is opened (usage errors exit 2 at once). */
  check(p: Parsed): void;
  run(rt: Runtime, p: Parsed, io: CliIo): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  migrate: { check: checkMigrate, run: migrate },
  reindex: { check: checkReindex, run: reindexCommand },
  admin: { check: checkAdmin, run: admin },
  sessions: { check: checkSessions, run: sessionsCommand },
  'org-paths': {
    check: (p) => {
      if (p.positional.length !== 1) throw new UsageError('org-paths takes no arguments');
    },
    run: orgPaths,
  },
};

/** Runs one command; returns the exit code. */
export async function runOps(argv: string[], io: CliIo = { out: process.stdout, err: process.stderr, env: process.env }): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    io.err.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  const command = COMMANDS[parsed.positional[0] ?? ''];
  if (parsed.flags.has('help') || parsed.positional[0] === 'help') {
    io.out.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (!command) {
    io.err.write(`${parsed.positional[0] ? `unknown command ${parsed.positional[0]}\n\n` : ''}${USAGE}\n`);
    return EXIT.usage;
  }
  let rt: Runtime | undefined;
  try {
    command.check(parsed);
    rt = await startRuntime(io);
    return await command.run(rt, parsed, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`${err.message}\n\n${USAGE}\n`);
      return EXIT.usage;
    }
    // Expected failures (store errors, bad configuration) in one line; anything else with its stack.
    const expected =
      err instanceof AppError ||
      err instanceof StoreAccessError ||
      (err instanceof Error && err.message.startsWith('invalid configuration'));
    const message = expected ? (err as Error).message : ((err as Error)?.stack ?? String(err));
    io.err.write(`\nfailed: ${message}\n`);
    return err instanceof ConflictError ? EXIT.conflict : EXIT.failed;
  } finally {
    await rt?.close();
  }
}
