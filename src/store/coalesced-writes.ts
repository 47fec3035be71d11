/**
 * Group commit of whole-document writes to one index: concurrent keyed and conditional writes
 * leave in one bulk request (batcher.ts: no timer, one request per free slot), and each call
 * is answered as its own request would have been, with its item's version or its item's
 * error (a conditional write that lost its race is a WriteConflictError, item-errors.ts).
 *
 * For hot-path writes that nobody reads through search at once (refresh=false): a
 * heartbeat and the host it sights. The ancestry of org-scoped records is stamped by the
 * DocStore's bulk, as for every other write.
 */
import type { estypes } from '@elastic/elasticsearch';
import { Batcher, type BatcherOptions, type ItemOutcome } from './batcher.js';
import type { DocStore } from './doc-store.js';
import type { Conditional } from './doc-types.js';
import { itemError } from './item-errors.js';
import { versionOf, type DocVersion } from './versions.js';
import { WRITE_IDS } from './write-token.js';

/** One bulk at a time: concurrent bulks to one shard contend (docs/adr/0007-group-commit-of-connection-state.md). */
export const GROUP_COMMIT: BatcherOptions = { maxBatch: 500, maxInFlight: 1 };

interface CoalescedWrite<T> {
  id: string;
  doc: T;
  /** Absent: a keyed write, whatever is stored under the id. */
  cond?: Conditional;
}

export class CoalescedWrites<T extends object> {
  private readonly batcher: Batcher<CoalescedWrite<T>, DocVersion>;

  constructor(
    private readonly docs: DocStore<T>,
    opts: BatcherOptions = GROUP_COMMIT,
  ) {
    this.batcher = new Batcher((items) => this.send(items), { name: `group commit ${docs.index}`, ...opts });
  }

  /** A keyed write, whatever is stored under the id (a retried one overwrites itself). */
  put(id: string, doc: T): Promise<DocVersion> {
    return this.batcher.submit({ id, doc });
  }

  /**
   * A write conditional on the read `cond` names (conditionOn); WriteConflictError when the
   * record has changed since. The ids of the writes before it stay on records that carry them
   * (write-token.ts), so that those writes' re-sends still recognise themselves.
   */
  replace(id: string, doc: T, cond: Conditional): Promise<DocVersion> {
    const kept = cond.priorWriteIds?.length ? ({ ...doc, [WRITE_IDS]: cond.priorWriteIds } as T) : doc;
    return this.batcher.submit({ id, doc: kept, cond });
  }

  private async send(items: CoalescedWrite<T>[]): Promise<ItemOutcome<DocVersion>[]> {
    const operations = items.flatMap(({ id, doc, cond }): (estypes.BulkOperationContainer | T)[] => [
      { index: { _id: id, ...(cond ? { if_seq_no: cond.if_seq_no, if_primary_term: cond.if_primary_term } : {}) } },
      doc,
    ]);
    const res = await this.docs.bulk(operations, { refresh: false });
    return res.items.map((item): ItemOutcome<DocVersion> => {
      const r = item.index;
      if (!r) return { ok: false, error: new Error('bulk answered an item without an index result') };
      if (r.error) return { ok: false, error: itemError(r.status, r.error) };
      return { ok: true, value: versionOf(r) };
    });
  }
}
