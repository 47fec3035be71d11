/**
 * The small SQL layer the device migration needs, behind one interface with two drivers:
 * the real PostgreSQL server (./sql-pg.ts) and the embedded PGlite (./sql-pglite.ts). Both
 * speak the same SQL and the same COPY text format, so the migration code does not know which
 * one it runs on. A driver's library is loaded when a database is first opened: the service
 * runs without either until a migration does, and their code is not part of its resident
 * memory (docs/adr/0147-what-the-service-loads-on-demand.md).
 */
import { PgDatabase } from './sql-pg.js';
import { PgliteDatabase } from './sql-pglite.js';
import { quoteIdent, type SqlDatabase } from './sql-session.js';

export type { SqlDatabase } from './sql-session.js';

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
  const db = await PgDatabase.open(u, schema);
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
