/**
 * Versioned SQL migration files (`sql/NNN_name.sql`), applied automatically when the
 * database is opened: every pending file in order, in one transaction, under a
 * transaction-level advisory lock so several instances starting at once apply each file
 * exactly once. `schema_migrations` records what was applied.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlDatabase } from './sql-db.js';

const sqlDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sql');

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
}

/** The migration files, ordered by version. */
export function migrationFiles(): MigrationFile[] {
  return fs
    .readdirSync(sqlDir)
    .map((f) => /^(\d+)_([\w-]+)\.sql$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), name: m[2], sql: fs.readFileSync(path.join(sqlDir, m[0]), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies pending migrations; returns the versions applied now. */
export async function applyMigrations(db: SqlDatabase): Promise<number[]> {
  const files = migrationFiles();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ecs:schema-migrations:${db.schema}`]);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)),
    );
    const applied: number[] = [];
    for (const f of files) {
      if (done.has(f.version)) continue;
      await tx.exec(f.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [f.version, f.name]);
      applied.push(f.version);
    }
    return applied;
  });
}
