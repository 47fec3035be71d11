/**
 * A lease: at most one instance at a time does a piece of maintenance. The lease is one
 * document in the `control` index holding its holder and expiry; it is taken create-only or,
 * when expired or already held by the caller, with a write conditional on the seq_no just
 * read, so of two instances racing for it exactly one wins. The holder renews it each run.
 */
import { DocStore } from './doc-store.js';
import type { StoreContext } from './client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { conditionOn } from './doc-types.js';

/** True while a record's embedded lease (a job's, a rollout's) is held by someone and not expired. */
export function leaseLive(doc: { leaseHolder?: string; leaseExpiresAt?: string }, now = Date.now()): boolean {
  return doc.leaseHolder !== undefined && doc.leaseExpiresAt !== undefined && Date.parse(doc.leaseExpiresAt) > now;
}

interface LeaseDoc {
  kind: 'lease';
  holder: string;
  expiresAt: string;
}

export class LeaseStore {
  private readonly docs: DocStore<LeaseDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<LeaseDoc>(ctx, 'control', 'lease');
  }

  /**
   * Takes or renews the lease `name` for `holder` until `now + ttlMs`; false when another
   * holder has it and it has not expired, or another instance took it concurrently.
   */
  async acquire(name: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
    const id = `lease:${name}`;
    const doc: LeaseDoc = { kind: 'lease', holder, expiresAt: new Date(now.getTime() + ttlMs).toISOString() };
    const cur = await this.docs.get(id);
    try {
      if (!cur) {
        await this.docs.create(id, doc, { refresh: false });
        return true;
      }
      if (cur.doc.holder !== holder && Date.parse(cur.doc.expiresAt) > now.getTime()) return false;
      await this.docs.put(id, doc, { refresh: false, ...conditionOn(cur) });
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Gives the lease up when `holder` still has it (on shutdown), so another may take it at once. */
  async release(name: string, holder: string): Promise<void> {
    const id = `lease:${name}`;
    const cur = await this.docs.get(id);
    if (!cur || cur.doc.holder !== holder) return;
    await this.docs
      .delete(id, { refresh: false, if_seq_no: cur.seqNo, if_primary_term: cur.primaryTerm })
      .catch((err: unknown) => {
        if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
      });
  }
}
