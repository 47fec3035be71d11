/**
 * The idempotency-keys index: one document per (caller, method, path, Idempotency-Key), the
 * only code that touches it. Only realtime gets read a key record, so its writes never
 * refresh; the purge reads by search and may miss the last 30 s of expiries (next time).
 */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { ConflictError } from '../../errors.js';
import type {
  IdempotencyKeyRecord,
  IdempotencyKeyStore,
  IdempotentOutcome,
  StoredKeyRecord,
} from './model.js';
import type { Logger } from '../../log.js';
import { conditionOn } from '../../store/doc-types.js';

export class IdempotencyKeyDocStore implements IdempotencyKeyStore {
  private readonly docs: DocStore<IdempotencyKeyRecord>;
  private lastPurge = 0;

  constructor(
    ctx: StoreContext,
    private readonly log: Logger,
  ) {
    this.docs = new DocStore<IdempotencyKeyRecord>(ctx, 'idempotency-keys', 'idempotency key');
  }

  /** Create-only claim; the record already holding the id when there is one. */
  async claim(id: string, record: IdempotencyKeyRecord): Promise<StoredKeyRecord | undefined> {
    try {
      await this.docs.create(id, record, { refresh: false });
      return undefined;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
    const held = await this.docs.get(id);
    // Purged between the two calls: the caller claims again.
    if (!held) return { record: { ...record, expiresAt: new Date(0).toISOString() }, seqNo: -1, primaryTerm: 0 };
    return { record: held.doc, seqNo: held.seqNo, primaryTerm: held.primaryTerm };
  }

  /** Overwrites an expired record, conditional on the read (a purged one: create-only). */
  async reclaim(id: string, record: IdempotencyKeyRecord, read: StoredKeyRecord): Promise<boolean> {
    try {
      if (read.seqNo < 0) await this.docs.create(id, record, { refresh: false });
      else await this.docs.put(id, record, { refresh: false, ...conditionOn(read) });
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Records the outcome of the operation. */
  async complete(id: string, outcome: IdempotentOutcome): Promise<void> {
    await this.docs.patch(id, { state: 'DONE', outcome }, { refresh: false });
  }

  /**
   * Elasticsearch here has no _delete_by_query: a point-in-time scan of the expired records and
   * one bulk delete per batch, started by a keyed request at most once per interval per instance.
   * Several instances purging at once only delete the same documents twice.
   */
  purgeExpiredSoon(now: Date, minIntervalMs: number): void {
    if (now.getTime() - this.lastPurge < minIntervalMs) return;
    this.lastPurge = now.getTime();
    this.purgeExpired(now).catch((err: unknown) => {
      this.log.warn({ err: { message: (err as Error).message } }, 'purge of expired idempotency keys failed; next time');
    });
  }

  /** Deletes every record that expired before `now`; returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    let deleted = 0;
    for await (const batch of this.docs.scan({ range: { expiresAt: { lt: now.toISOString() } } }, { batchSize: 500 })) {
      await this.docs.bulk(
        batch.map((h) => ({ delete: { _id: h.id, if_seq_no: h.seqNo, if_primary_term: h.primaryTerm } })),
        { refresh: false },
      );
      deleted += batch.length;
    }
    return deleted;
  }
}
