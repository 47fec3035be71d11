/**
 * What the SQL layer's two drivers share (./sql-db.ts opens one): the session interface,
 * identifier quoting, COPY's statement and the translation of "not reachable now" into 503.
 */
import { ServiceUnavailableError } from '../errors.js';

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

/** An identifier (a table, column or schema name) quoted for SQL. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** COPY of `columns` into `table` from `source` (STDIN, or PGlite's '/dev/blob'). */
export const copySql = (table: string, columns: readonly string[], source: string): string =>
  `COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM ${source}`;

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE']);

/** PostgreSQL errors that mean "not reachable or not ready right now" → 503. */
export function translateSqlError(err: unknown): unknown {
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

/** A driver call whose "not reachable now" errors become 503s (translateSqlError). */
export async function sqlCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateSqlError(err);
  }
}
