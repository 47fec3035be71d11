/**
 * The small SQL layer the device migration needs, behind one interface with two drivers:
 * the real PostgreSQL server through `pg` (a pool; COPY … FROM STDIN through
 * pg-copy-streams) and the embedded PGlite (one in-process session; COPY … FROM '/dev/blob',
 * its own copy support). Both speak the same SQL and the same COPY text format, so the
 * migration code does not know which one it runs on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { ConflictError, ServiceUnavailableError } from '../errors.js';

export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

/** One session (a connection, or a transaction on it). */
export interface SqlSession {
  /** One statement with `$n` parameters. */
  query<R extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<R>>;
  /** Several statements without parameters (migration files). */
  exec(sql: string): Promise<void>;
  /**
   * COPY of rows in PostgreSQL's text format (one line per row, `\n`-terminated) into
   * `table (columns)`. Returns the number of rows copied.
   */
  copyFrom(table: string, columns: readonly string[], lines: readonly string[]): Promise<number>;
}

export interface SqlDatabase extends SqlSession {
  readonly driver: 'pg' | 'pglite';
  /** The schema every unqualified name resolves to. */
  readonly schema: string;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one session held for its whole duration (session-level advisory locks).
   * On PGlite every call shares the single session, so such locks exclude other processes
   * only; callers keep their own in-process guard.
   */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const copySql = (table: string, columns: readonly string[], source: string): string =>
  `COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM ${source}`;

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE']);

/** PostgreSQL errors that mean "not reachable or not ready right now" → 503. */
function translateSqlError(err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  const code = e?.code ?? '';
  if (
    CONNECTION_CODES.has(code) ||
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin shutdown
    code === '57P03' || // cannot connect now
    code === '53300' || // too many connections
    /Connection terminated|timeout exceeded when trying to connect/i.test(e?.message ?? '')
  ) {
    return new ServiceUnavailableError('the relational store is temporarily unavailable; retry later');
  }
  return err;
}

async function sqlCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateSqlError(err);
  }
}

function pgSession(client: pg.PoolClient | pg.Pool): SqlSession {
  return {
    query: async <R extends object>(sql: string, params?: unknown[]) => {
      const res = await sqlCall(() => client.query(sql, params));
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    },
    exec: async (sql: string) => {
      await sqlCall(() => client.query(sql));
    },
    copyFrom: async (table, columns, lines) => {
      if (!('release' in client)) throw new Error('COPY needs a dedicated session (use transaction or withSession)');
      const stream = client.query(copyFrom(copySql(table, columns, 'STDIN')));
      // Readable.from + pipeline writes only as fast as the server drains (back-pressure).
      await sqlCall(() => pipeline(Readable.from(lines, { objectMode: false }), stream));
      return Number(stream.rowCount ?? 0);
    },
  };
}

/** The real server, through a small pool; every connection starts in `schema`. */
export class PgDatabase implements SqlDatabase {
  readonly driver = 'pg' as const;
  private readonly pool: pg.Pool;
  private readonly session: SqlSession;

  constructor(
    connectionString: string,
    readonly schema: string,
  ) {
    this.pool = new pg.Pool({
      connectionString,
      max: 4,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 10_000,
      allowExitOnIdle: true,
      options: `-c search_path=${schema}`,
    });
    // An idle client losing its connection must not crash the process.
    this.pool.on('error', () => undefined);
    this.session = pgSession(this.pool);
  }

  query<R extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<R>> {
    return this.session.query<R>(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.session.exec(sql);
  }
  copyFrom(table: string, columns: readonly string[], lines: readonly string[]): Promise<number> {
    return this.withSession((s) => s.copyFrom(table, columns, lines));
  }

  async withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    const client = await sqlCall(() => this.pool.connect());
    let broken = false;
    try {
      return await fn(pgSession(client));
    } catch (err) {
      broken = translateSqlError(err) instanceof ServiceUnavailableError;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.withSession(async (s) => {
      await s.exec('BEGIN');
      try {
        const out = await fn(s);
        await s.exec('COMMIT');
        return out;
      } catch (err) {
        await s.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function pgliteSession(db: PGlite | Transaction): SqlSession {
  return {
    query: async <R extends object>(sql: string, params?: unknown[]) => {
      const res = await db.query<R>(sql, params);
      return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length };
    },
    exec: async (sql: string) => {
      await db.exec(sql);
    },
    copyFrom: async (table, columns, lines) => {
      const res = await db.query(copySql(table, columns, `'/dev/blob'`), [], { blob: new Blob([lines.join('')]) });
      return res.affectedRows ?? 0;
    },
  };
}

/**
 * The embedded PostgreSQL (PGlite) in a directory, or in memory. A lock file beside the
 * directory keeps a second process (the ops CLI while the service runs) from opening the
 * same data directory: PGlite is single-process.
 */
export class PgliteDatabase implements SqlDatabase {
  readonly driver = 'pglite' as const;
  private readonly session: SqlSession;

  private constructor(
    private readonly db: PGlite,
    readonly schema: string,
    private readonly lockFile: string | undefined,
  ) {
    this.session = pgliteSession(db);
  }

  static async open(dir: string | undefined, schema: string): Promise<PgliteDatabase> {
    let lockFile: string | undefined;
    if (dir) {
      fs.mkdirSync(path.dirname(path.resolve(dir)), { recursive: true });
      lockFile = `${path.resolve(dir)}.lock`;
      acquireLockFile(lockFile, dir);
    }
    try {
      const db = new PGlite(dir);
      await db.waitReady;
      await db.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)}`);
      return new PgliteDatabase(db, schema, lockFile);
    } catch (err) {
      if (lockFile) fs.rmSync(lockFile, { force: true });
      throw err;
    }
  }

  query<R extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<R>> {
    return this.session.query<R>(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.session.exec(sql);
  }
  copyFrom(table: string, columns: readonly string[], lines: readonly string[]): Promise<number> {
    return this.session.copyFrom(table, columns, lines);
  }
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return fn(this.session);
  }
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(pgliteSession(tx)));
  }
  async close(): Promise<void> {
    await this.db.close();
    if (this.lockFile) fs.rmSync(this.lockFile, { force: true });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

function acquireLockFile(lockFile: string, dir: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(lockFile, 'utf8').trim());
      // Our own pid too: PGlite cannot open one directory twice in a process either.
      if (pid > 0 && pidAlive(pid)) {
        throw new ConflictError(
          `the embedded PostgreSQL in ${dir} is in use by process ${pid}; stop it, or use the HTTP operation, or set DATABASE_URL`,
        );
      }
      fs.rmSync(lockFile, { force: true }); // left by a process that died
    }
  }
  throw new ConflictError(`could not lock the embedded PostgreSQL in ${dir}`);
}

/** Default data directory of the embedded PostgreSQL when DATABASE_URL is unset. */
export const DEFAULT_PGLITE_URL = 'pglite:.local/pglite';

/**
 * Opens the database named by `url`: `postgres://…`/`postgresql://…` (the real server),
 * `pglite:memory`, or `pglite:<dir>`; unset means `pglite:.local/pglite`. The schema is
 * created when missing.
 */
export async function openDatabase(url: string | undefined, schema: string): Promise<SqlDatabase> {
  const u = url ?? DEFAULT_PGLITE_URL;
  if (u.startsWith('pglite:')) {
    const where = u.slice('pglite:'.length).replace(/^\/\/(?=\/)/, '');
    return PgliteDatabase.open(where === '' || where === 'memory' ? undefined : where, schema);
  }
  const db = new PgDatabase(u, schema);
  try {
    // The schema must exist before search_path can resolve into it.
    await db.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`).catch((err: { code?: string }) => {
      // Two instances creating it at once: one loses the race on the catalog's unique index.
      if (err.code !== '23505' && err.code !== '42P06') throw err;
    });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}
