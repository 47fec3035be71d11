/**
 * `npm run bench -- migration`: the UTM device migration (spec 4.4) of N and 5N records into
 * PostgreSQL, run as operators run it (`npm run ops -- migrate utm --json`, compiled, in a
 * fresh process per size so its peak RSS is that run's own), against two floors:
 *  - scan + COPY: the same records read from Elasticsearch the same way (point in time,
 *    search_after, the migration's batch size) and COPYed, page by page, into a scratch table — the
 *    store work of a copy with nothing else (no change detection, no upsert, no marks);
 *  - COPY only: the same rows, already encoded in memory, in one COPY — PostgreSQL's own floor.
 * PostgreSQL: BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test, schema
 * `bench_migration` (dropped and recreated per size). When it does not answer, the embedded
 * PGlite in a temporary directory stands in (and the results say so).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import type { Config } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { ensureIndices } from '../src/store/index-setup.js';
import type { StoreContext } from '../src/store/client.js';
import { openDatabase, type SqlDatabase } from '../src/migration/sql-db.js';
import { applyMigrations } from '../src/migration/schema-migrations.js';
import { FAMILY_TABLES, copyColumns, copyLine } from '../src/migration/device-rows.js';
import { MIGRATION_BATCH } from '../src/migration/device-migration.js';
import { cpuSeconds } from './proc.js';
import { endpointStore, refreshIndex } from '../test/helpers/endpoint-store.js';
import { bulkDocs, seededIds, utmDoc, type SeedSize } from './seed.js';

export const MIGRATION_SCHEMA = 'bench_migration';
const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';

export interface MigrationRun {
  records: number;
  /** esCpuSeconds: Elasticsearch CPU over the whole ops process (scan, marks, refresh). */
  migrate: { seconds: number; recordsPerSecond: number; peakRssMb: number; processSeconds: number; esCpuSeconds?: number; counts: Record<string, number> };
  scanCopy: { seconds: number; recordsPerSecond: number; esCpuSeconds?: number };
  copyOnly: { seconds: number; recordsPerSecond: number };
  ratioToScanCopy: number;
  ratioToCopyOnly: number;
}

export interface MigrationResult {
  driver: 'pg' | 'pglite';
  database: string;
  postgres: string;
  schema: string;
  runs: MigrationRun[];
  /** Peak RSS at 5N ÷ peak RSS at N. */
  rssRatio: number;
}

/** The database the benchmark writes into: the PostgreSQL server when it answers, else PGlite in a temporary directory. */
async function chooseDatabase(log: (l: string) => void): Promise<{ url: string; driver: 'pg' | 'pglite'; version: string; reset(): Promise<void> }> {
  const url = process.env.BENCH_DATABASE_URL ?? DEFAULT_PG;
  try {
    const db = await openDatabase(url, MIGRATION_SCHEMA);
    try {
      const v = await db.query<{ v: string }>('SELECT version() AS v');
      return {
        url,
        driver: 'pg',
        version: v.rows[0]?.v ?? '?',
        reset: async () => {
          const d = await openDatabase(url, 'public');
          await d.exec(`DROP SCHEMA IF EXISTS ${MIGRATION_SCHEMA} CASCADE`);
          await d.close();
        },
      };
    } finally {
      await db.close();
    }
  } catch (err) {
    const dir = path.join(os.tmpdir(), `ecs-bench-pglite-${process.pid}`);
    log(`PostgreSQL at ${url} does not answer (${(err as Error).message}); using the embedded PGlite in ${dir}`);
    const pgl = `pglite:${dir}`;
    const db = await openDatabase(pgl, MIGRATION_SCHEMA);
    const v = await db.query<{ v: string }>('SELECT version() AS v');
    await db.close();
    return {
      url: pgl,
      driver: 'pglite',
      version: `PGlite (${v.rows[0]?.v ?? '?'})`,
      reset: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
}

/** Runs `npm run ops -- migrate utm --json` (compiled) and samples its peak RSS. */
async function runOpsMigrate(env: Record<string, string>): Promise<{ out: Record<string, number>; peakRssMb: number; processSeconds: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['dist/cli/ops.js', 'migrate', 'utm', '--json'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peakKb = 0;
  const status = `/proc/${child.pid}/status`;
  const timer = setInterval(() => {
    try {
      const kb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(status, 'utf8'))?.[1] ?? 0);
      peakKb = Math.max(peakKb, kb);
    } catch {
      /* exited */
    }
  }, 25);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`ops migrate exited with ${code}: ${stderr.slice(-2000)}`);
  const line = stdout.trim().split('\n').pop() ?? '{}';
  return { out: JSON.parse(line) as Record<string, number>, peakRssMb: peakKb / 1024, processSeconds: (Date.now() - t0) / 1000 };
}

/** The same records read the same way and COPYed page by page into a scratch table. */
async function scanCopy(db: SqlDatabase, ctx: StoreContext): Promise<number> {
  const t = FAMILY_TABLES.utm;
  await db.exec(`DROP TABLE IF EXISTS copy_floor; CREATE TABLE copy_floor (LIKE ${t.table} INCLUDING DEFAULTS)`);
  const t0 = performance.now();
  let n = 0;
  for await (const batch of endpointStore(ctx).scan({ terms: { type: [...t.types] } }, MIGRATION_BATCH)) {
    await db.transaction(async (tx) => {
      n += await tx.copyFrom(
        'copy_floor',
        copyColumns(t),
        batch.map((h) => copyLine(t, h.doc, h.version)),
      );
    });
  }
  const seconds = (performance.now() - t0) / 1000;
  if (n === 0) throw new Error('scan + COPY copied nothing');
  return seconds;
}

/** The same rows, encoded beforehand, in one COPY. */
async function copyOnly(db: SqlDatabase, records: number, orgs: string[], now: string): Promise<number> {
  const t = FAMILY_TABLES.utm;
  const lines = Array.from({ length: records }, (_, i) => copyLine(t, utmDoc(i, orgs, now), 2));
  await db.exec(`DROP TABLE IF EXISTS copy_floor; CREATE TABLE copy_floor (LIKE ${t.table} INCLUDING DEFAULTS)`);
  const t0 = performance.now();
  await db.transaction((tx) => tx.copyFrom('copy_floor', copyColumns(t), lines));
  return (performance.now() - t0) / 1000;
}

export async function migrationBench(opts: {
  client: Client;
  esUrl: string;
  /** The local Elasticsearch pid, for its CPU use. */
  esPid?: number;
  prefix: string;
  config: Config;
  size: SeedSize;
  log: (l: string) => void;
}): Promise<MigrationResult> {
  const { client, log } = opts;
  const prefix = `${opts.prefix}-mig`;
  const ctx: StoreContext = { client, prefix, refresh: 'none' };
  const db = await chooseDatabase(log);
  const orgs = seededIds(opts.size).orgs;
  const runs: MigrationRun[] = [];
  for (const records of [opts.size.utm, 5 * opts.size.utm]) {
    // A fresh index holding exactly `records` UTM records, and a fresh schema.
    const existing = await client.indices.get({ index: `${prefix}-*`, allow_no_indices: true, ignore_unavailable: true });
    for (const name of Object.keys(existing)) await client.indices.delete({ index: name });
    await ensureIndices(ctx, createLogger('warn'));
    const now = new Date().toISOString();
    for (let start = 0; start < records; start += 5000) {
      await bulkDocs(
        ctx,
        Array.from({ length: Math.min(5000, records - start) }, (_, k) => utmDoc(start + k, orgs, now)),
      );
    }
    await refreshIndex(ctx, 'endpoints');
    await db.reset();
    log(`migration: ${records} UTM records seeded; running ops migrate utm`);

    const es0 = cpuSeconds(opts.esPid);
    const m = await runOpsMigrate({
      ELASTICSEARCH_URL: opts.esUrl,
      ECS_INDEX_PREFIX: prefix,
      DATABASE_URL: db.url,
      ECS_SQL_SCHEMA: MIGRATION_SCHEMA,
    });
    const es1 = cpuSeconds(opts.esPid);
    if (m.out.destCount !== records) throw new Error(`migration wrote ${m.out.destCount} rows of ${records}`);
    const seconds = m.out.elapsedMs / 1000;

    const sql = await openDatabase(db.url, MIGRATION_SCHEMA);
    let scan: number;
    let copy: number;
    let scanEs: number | undefined;
    try {
      await applyMigrations(sql);
      const es2 = cpuSeconds(opts.esPid);
      scan = await scanCopy(sql, ctx);
      scanEs = es2 === undefined ? undefined : (cpuSeconds(opts.esPid) ?? es2) - es2;
      copy = await copyOnly(sql, records, orgs, now);
      await sql.exec('DROP TABLE IF EXISTS copy_floor');
    } finally {
      await sql.close();
    }
    const run: MigrationRun = {
      records,
      migrate: {
        seconds,
        recordsPerSecond: records / seconds,
        peakRssMb: m.peakRssMb,
        processSeconds: m.processSeconds,
        esCpuSeconds: es0 === undefined || es1 === undefined ? undefined : es1 - es0,
        counts: m.out,
      },
      scanCopy: { seconds: scan, recordsPerSecond: records / scan, esCpuSeconds: scanEs },
      copyOnly: { seconds: copy, recordsPerSecond: records / copy },
      ratioToScanCopy: scan / seconds,
      ratioToCopyOnly: copy / seconds,
    };
    runs.push(run);
    log(
      `migration of ${records}: ${run.migrate.recordsPerSecond.toFixed(0)} records/s (${seconds.toFixed(1)} s, peak RSS ${m.peakRssMb.toFixed(0)} MB) | ` +
        `ES CPU ${run.migrate.esCpuSeconds?.toFixed(1) ?? '?'} s | scan + COPY ${run.scanCopy.recordsPerSecond.toFixed(0)}/s (ratio ${run.ratioToScanCopy.toFixed(2)}, ES CPU ${run.scanCopy.esCpuSeconds?.toFixed(1) ?? '?'} s) | COPY only ${run.copyOnly.recordsPerSecond.toFixed(0)}/s (ratio ${run.ratioToCopyOnly.toFixed(2)})`,
    );
  }
  const existing = await client.indices.get({ index: `${prefix}-*`, allow_no_indices: true, ignore_unavailable: true });
  for (const name of Object.keys(existing)) await client.indices.delete({ index: name });
  await db.reset();
  return {
    driver: db.driver,
    database: db.url.replace(/\/\/[^@/]*@/, '//'),
    postgres: db.version,
    schema: MIGRATION_SCHEMA,
    runs,
    rssRatio: runs[1].migrate.peakRssMb / runs[0].migrate.peakRssMb,
  };
}
