/**
 * The real PostgreSQL server through `pg`: a pool; COPY … FROM STDIN through pg-copy-streams.
 * Both libraries are imported when a database is first opened (`PgDatabase.open`,
 * docs/adr/0147-what-the-service-loads-on-demand.md); this module's own code is imported
 * statically, so its errors are the classes every caller checks against.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { from as copyFromStream } from 'pg-copy-streams';
import { ServiceUnavailableError } from '../errors.js';
import { copySql, sqlCall, translateSqlError, type SqlDatabase, type SqlResult, type SqlSession } from './sql-session.js';

/** The two libraries, as loaded. */
interface PgModules {
  pg: typeof pg;
  copyFrom: typeof copyFromStream;
}

function pgSession(client: pg.PoolClient | pg.Pool, { copyFrom }: PgModules): SqlSession {
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

  /** Loads the driver's libraries (once; the module cache keeps them) and opens a pool. */
  static async open(connectionString: string, schema: string): Promise<PgDatabase> {
    const [{ default: pgModule }, { from }] = await Promise.all([import('pg'), import('pg-copy-streams')]);
    return new PgDatabase({ pg: pgModule, copyFrom: from }, connectionString, schema);
  }

  private constructor(
    private readonly modules: PgModules,
    connectionString: string,
    readonly schema: string,
  ) {
    this.pool = new modules.pg.Pool({
      connectionString,
      max: 4,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 10_000,
      allowExitOnIdle: true,
      options: `-c search_path=${schema}`,
    });
    // An idle client losing its connection must not crash the process.
    this.pool.on('error', () => undefined);
    this.session = pgSession(this.pool, this.modules);
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
      return await fn(pgSession(client, this.modules));
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
