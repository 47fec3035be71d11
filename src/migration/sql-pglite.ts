/**
 * The embedded PostgreSQL, PGlite: one in-process session; COPY … FROM '/dev/blob', its own copy
 * support. PGlite is imported when a database is first opened (`PgliteDatabase.open`,
 * docs/adr/0147-what-the-service-loads-on-demand.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { ConflictError } from '../errors.js';
import { copySql, quoteIdent, type SqlDatabase, type SqlResult, type SqlSession } from './sql-session.js';

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
      const { PGlite } = await import('@electric-sql/pglite');
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
