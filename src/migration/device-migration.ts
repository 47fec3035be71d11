/**
 * Spec 4.4: copies the UTM or LTE endpoint records of Elasticsearch into PostgreSQL, shared
 * by the HTTP operations and the ops CLI.
 *
 * One run streams the family with a point in time and search_after (EndpointStore.scan),
 * one batch at a time (memory bounded by the batch size: at most two batches are held, the
 * one being marked and the one being staged). Per batch:
 *  1. read the `source_version` of the batch's rows (one SELECT);
 *  2. skip records that are soft-deleted (their row, if any, is removed) or unchanged since
 *     migrated (marked MIGRATED_TO_SQL and `_version` equal to the row's source_version);
 *  3. COPY the others into a staging table and upsert them (`INSERT … ON CONFLICT (id) DO
 *     UPDATE`), in one transaction, recording the `_version` each document will have once
 *     marked; the transaction commits only after the previous batch's marks are written;
 *  4. after the commit, mark them MIGRATED_TO_SQL in one bulk request (each document
 *     rewritten as read, with the mark), conditional on the seq_no/primary_term that was
 *     read, so a record changed meanwhile is not marked: its row is flagged (source_version
 *     -1) and the next run copies it again. The marks are written while the next batch is
 *     read, selected and staged (the pipelining that keeps Elasticsearch and PostgreSQL
 *     busy at once).
 * A run killed anywhere leaves committed rows and at most one batch without its mark; the
 * rerun copies those again over the same primary keys, so every record ends exactly once.
 * One run per family at a time: an in-process guard plus a PostgreSQL session advisory lock
 * (held on its own connection, released by the server if the process dies) → 409.
 */
import type { Logger } from '../log.js';
import { ConflictError } from '../errors.js';
import type { EndpointStore } from '../resources/endpoints/store.js';
import type { Stored } from '../store/doc-store.js';
import type { EndpointDoc } from '../resources/endpoints/model.js';
import { openDatabase, type SqlDatabase } from './sql-db.js';
import { applyMigrations } from './schema-migrations.js';
import {
  FAMILY_TABLES,
  MIGRATED_TO_SQL,
  copyColumns,
  copyLine,
  upsertSql,
  type DeviceFamily,
  type FamilyTable,
} from './device-rows.js';

/** Spec 2.1 MigrationCounts. */
export interface MigrationCounts {
  /** Records read from Elasticsearch. */
  sourceCount: number;
  /** Rows written or updated in PostgreSQL. */
  destCount: number;
  /** Records skipped: already migrated and unchanged, or deleted. */
  ignoredCount: number;
}

export interface MigrationProgress extends MigrationCounts {
  family: DeviceFamily;
  batches: number;
  /** Records of the family when the run started (for a progress bar). */
  total: number;
}

export interface MigrationRunOptions {
  batchSize?: number;
  /** Called (and awaited) after each committed and marked batch; a throw aborts the run there, as a crash would. */
  onProgress?: (p: MigrationProgress) => void | Promise<void>;
}

export interface DeviceMigrationOptions {
  /** DATABASE_URL (see openDatabase). */
  databaseUrl: string | undefined;
  schema: string;
  log: Logger;
}

/** Records per batch: larger batches amortize the per-batch round trips (docs/adr/0049-device-migration-to-postgresql.md). */
export const MIGRATION_BATCH = 2500;

export class DeviceMigrationService {
  private db: Promise<SqlDatabase> | undefined;
  private readonly running = new Set<DeviceFamily>();

  constructor(
    private readonly endpoints: EndpointStore,
    private readonly opts: DeviceMigrationOptions,
  ) {}

  /** The database, opened and migrated on first use (so the service starts without it). */
  database(): Promise<SqlDatabase> {
    this.db ??= (async () => {
      const db = await openDatabase(this.opts.databaseUrl, this.opts.schema);
      try {
        const applied = await applyMigrations(db);
        if (applied.length > 0) {
          this.opts.log.info({ driver: db.driver, schema: db.schema, applied }, 'applied SQL migrations');
        }
        return db;
      } catch (err) {
        await db.close().catch(() => undefined);
        throw err;
      }
    })().catch((err: unknown) => {
      this.db = undefined; // the next call tries again
      throw err;
    });
    return this.db;
  }

  /** Copies every record of the family; 409 when a run of that family is in progress anywhere. */
  async migrate(family: DeviceFamily, opts: MigrationRunOptions = {}): Promise<MigrationCounts> {
    if (this.running.has(family)) throw this.busy(family);
    this.running.add(family);
    try {
      const db = await this.database();
      return await db.withSession(async (lock) => {
        const key = `ecs:device-migration:${db.schema}:${family}`;
        const got = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
        if (!got.rows[0]?.locked) throw this.busy(family);
        try {
          return await this.copy(db, family, opts);
        } finally {
          await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
        }
      });
    } finally {
      this.running.delete(family);
    }
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    if (db) await (await db.catch(() => undefined))?.close();
  }

  private busy(family: DeviceFamily): ConflictError {
    return new ConflictError(`a ${family.toUpperCase()} device migration is already in progress`);
  }

  private async copy(db: SqlDatabase, family: DeviceFamily, opts: MigrationRunOptions): Promise<MigrationCounts> {
    const t = FAMILY_TABLES[family];
    const log = this.opts.log.child({ migration: family });
    // Marks are written without refresh and a run killed before its final refresh leaves
    // some invisible to the point in time this run scans from: it would copy them again.
    await this.endpoints.refresh();
    const total = await this.endpoints.count({ terms: { type: [...t.types] } });
    const counts: MigrationCounts = { sourceCount: 0, destCount: 0, ignoredCount: 0 };
    let marked = 0;
    log.info({ total, driver: db.driver }, 'device migration started');
    try {
      await this.copyBatches(db, t, family, opts, counts, total, () => (marked += 1));
    } finally {
      // The marks were written without refresh; make them visible to searches once, also after a failure.
      if (marked > 0) await this.endpoints.refresh().catch(() => undefined);
    }
    log.info({ ...counts }, 'device migration finished');
    return counts;
  }

  private async copyBatches(
    db: SqlDatabase,
    t: FamilyTable,
    family: DeviceFamily,
    opts: MigrationRunOptions,
    counts: MigrationCounts,
    total: number,
    onMarked: () => void,
  ): Promise<void> {
    const log = this.opts.log.child({ migration: family });
    const query = { terms: { type: [...t.types] } };
    let batches = 0;
    // The marks of the previous batch, still being written while this batch is read and staged.
    let previous: { marks: Promise<string[]>; counts: MigrationCounts } | undefined;
    /** Waits for the previous batch's marks and reports it (a throw aborts the run there). */
    const settlePrevious = async (): Promise<string[]> => {
      if (!previous) return [];
      const p = previous;
      previous = undefined;
      const unmarked = await p.marks;
      batches += 1;
      await opts.onProgress?.({ family, ...p.counts, batches, total });
      return unmarked;
    };
    /** Changed (or removed) since it was read: make the next run copy it again. */
    const flagUnmarked = async (unmarked: string[]): Promise<void> => {
      if (unmarked.length === 0) return;
      await db.query(`UPDATE ${t.table} SET source_version = -1 WHERE id = ANY($1)`, [unmarked]);
      log.info({ count: unmarked.length }, 'records changed while being migrated; the next run copies them again');
    };
    try {
      for await (const batch of this.endpoints.scan(query, opts.batchSize ?? MIGRATION_BATCH)) {
        counts.sourceCount += batch.length;
        const deletedIds = batch.filter((h) => h.doc.deleted).map((h) => h.id);
        const live = batch.filter((h) => !h.doc.deleted);
        const stored = new Map<string, number>();
        if (live.length > 0) {
          const res = await db.query<{ id: string; source_version: string | number }>(
            `SELECT id, source_version FROM ${t.table} WHERE id = ANY($1)`,
            [live.map((h) => h.id)],
          );
          for (const r of res.rows) stored.set(r.id, Number(r.source_version));
        }
        const changed = live.filter((h) => !(h.doc.externalStatus === MIGRATED_TO_SQL && stored.get(h.id) === h.version));
        // The version the document will have after its mark (an unchanged mark is a no-op in Elasticsearch).
        const after = (h: Stored<EndpointDoc>): number => (h.doc.externalStatus === MIGRATED_TO_SQL ? h.version : h.version + 1);

        let unmarked: string[] = [];
        if (changed.length > 0 || deletedIds.length > 0) {
          await db.transaction(async (tx) => {
            if (changed.length > 0) {
              const staging = `stage_${t.table}`;
              await tx.exec(`CREATE TEMP TABLE ${staging} (LIKE ${t.table} INCLUDING DEFAULTS) ON COMMIT DROP`);
              await tx.copyFrom(
                staging,
                copyColumns(t),
                changed.map((h) => copyLine(t, h.doc, after(h))),
              );
              await tx.query(upsertSql(t, staging));
            }
            if (deletedIds.length > 0) await tx.query(`DELETE FROM ${t.table} WHERE id = ANY($1)`, [deletedIds]);
            // This batch commits only once the previous one is marked: a run stopped anywhere
            // leaves at most one committed batch without its marks.
            unmarked = await settlePrevious();
          });
        } else {
          unmarked = await settlePrevious();
        }
        await flagUnmarked(unmarked);
        counts.destCount += changed.length;
        counts.ignoredCount += batch.length - changed.length;

        const toMark = changed.filter((h) => h.doc.externalStatus !== MIGRATED_TO_SQL);
        if (toMark.length > 0) onMarked();
        previous = { marks: this.mark(toMark, after), counts: { ...counts } };
        // An early failure of the marks must not wait for the next batch to be noticed.
        previous.marks.catch(() => undefined);
      }
      await flagUnmarked(await settlePrevious());
    } catch (err) {
      // Let marks in flight settle (their outcome no longer matters) before giving up.
      await previous?.marks.catch(() => undefined);
      throw err;
    }
  }

  /**
   * Marks copied records MIGRATED_TO_SQL in one bulk request: each document rewritten as read
   * with the mark (no read-modify-write in Elasticsearch), conditional on the seq_no/primary
   * term that was read, so a record changed meanwhile is not marked. Answers the ids not
   * marked (or marked at another version than the row records).
   */
  private async mark(toMark: Stored<EndpointDoc>[], after: (h: Stored<EndpointDoc>) => number): Promise<string[]> {
    if (toMark.length === 0) return [];
    const items = await this.endpoints.replaceAsRead(toMark.map((hit) => ({ hit, doc: { ...hit.doc, externalStatus: MIGRATED_TO_SQL } })));
    const expected = new Map(toMark.map((h) => [h.id, after(h)]));
    return items
      .filter((r) => r.error || r._version !== expected.get(String(r._id)))
      .map((r) => String(r._id));
  }
}
