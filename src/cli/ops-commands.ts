/**
 * The ops toolkit (`npm run ops -- <command>`), sharing the service's code: the same
 * configuration, store layer, services and migration as the HTTP operations. Human output
 * on stdout (or one JSON document with --json), progress on stderr, logs (warnings and up)
 * on stderr. Exit codes: 0 done (or nothing to do), 1 failed, 2 usage error, 3 conflict
 * (a run of the same work is in progress, or a leftover needs --restart).
 */
import os from 'node:os';
import { AppError, ConflictError } from '../errors.js';
import { StoreAccessError } from '../store/client.js';
import { reindexableIndices, type ReindexResult } from '../store/reindex.js';
import { reindexUnderLease } from '../store/schema.js';
import { stampAncestry, unstampedCount } from '../resources/organizations/ancestry-migration.js';
import { DEVICE_FAMILIES, type DeviceFamily } from '../migration/device-rows.js';
import { ProgressBar } from './progress.js';
import { EXIT, UsageError, batchSize, fmt, onlyFlags, parseArgs, seconds, startRuntime, type CliIo, type Command, type Parsed, type Runtime } from './ops-runtime.js';
import { admin, checkAdmin, checkSessions, sessionsCommand } from './ops-people.js';

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
