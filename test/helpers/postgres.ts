/**
 * The real PostgreSQL of a test run (DATABASE_URL, default the machine's server) and one
 * schema per test file and run, dropped afterwards, so runs and files never share rows.
 */
import pg from 'pg';
import { RUN_PREFIX } from './app.js';

export const TEST_DATABASE_URL =
  process.env.DATABASE_URL && !process.env.DATABASE_URL.startsWith('pglite:')
    ? process.env.DATABASE_URL
    : 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name unique to this run and `suffix`. */
export function testSchema(suffix: string): string {
  return `${RUN_PREFIX.replace(/[^a-z0-9]/g, '_')}_${suffix}`;
}

/** One query on the test database, in `schema`. */
export async function sql<R extends object = Record<string, unknown>>(schema: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await sql('public', `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** A connection holding a session advisory lock until `release` (stands in for another instance's run). */
export async function holdAdvisoryLock(key: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
  return { release: () => client.end() };
}
