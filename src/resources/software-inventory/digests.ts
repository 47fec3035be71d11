/**
 * The inventory-digests index: per endpoint, the digest of the full report its stored
 * entries equal, so that an unchanged report is answered from one realtime get instead of a
 * search of every entry (docs/adr/0151-an-unchanged-inventory-report-read-by-its-digest.md).
 *
 * A digest is a claim the store can withdraw: every write to an endpoint's entries first (a full
 * report) or afterwards (a single-entry change) replaces it with an open one, and a report sets
 * its digest only conditionally on the open one it wrote itself, so a concurrent writer's entry
 * can never hide behind it.
 */
import type { StoreContext } from '../../store/client.js';
import { DocStore } from '../../store/doc-store.js';
import { WriteConflictError } from '../../errors.js';
import type { DocVersion } from '../../store/versions.js';

export interface InventoryDigestDoc {
  endpointId: string;
  /** The report's digest (model.ts reportDigest); null while a write to the entries is open. */
  digest: string | null;
  /** The oldest lastSeen among the entries the digest covers. */
  lastSeenFloor: string | null;
  updatedAt: string;
}

/** What a report finds: the digest and the oldest lastSeen it covers, when one is set. */
export interface ReadDigest {
  digest?: string;
  lastSeenFloor?: string;
}

/** A write to an endpoint's entries that has begun: the report sets its digest on this version only. */
export type OpenWrite = Pick<DocVersion, 'seqNo' | 'primaryTerm'>;

/** Gets coalesced as the endpoints' are: a report reads its endpoint and its digest side by side. */
const DIGEST_READS = { maxBatch: 500, maxInFlight: 2 };

export class InventoryDigests {
  private readonly docs: DocStore<InventoryDigestDoc>;

  constructor(ctx: StoreContext) {
    this.docs = new DocStore<InventoryDigestDoc>(ctx, 'inventory-digests', 'inventory digest', { reads: DIGEST_READS });
  }

  /** The endpoint's digest as the store holds it now (realtime); empty when none is set. */
  async read(endpointId: string): Promise<ReadDigest> {
    const hit = await this.docs.get(endpointId);
    if (!hit?.doc.digest || !hit.doc.lastSeenFloor) return {};
    return { digest: hit.doc.digest, lastSeenFloor: hit.doc.lastSeenFloor };
  }

  /**
   * Withdraws the endpoint's digest: before a report reads its entries, after a single-entry
   * write. Unconditional, so that it also overrules a report's digest being set meanwhile.
   */
  async open(endpointId: string): Promise<OpenWrite> {
    const res = await this.docs.put(
      endpointId,
      { endpointId, digest: null, lastSeenFloor: null, updatedAt: new Date().toISOString() },
      { refresh: false },
    );
    return { seqNo: res.seqNo, primaryTerm: res.primaryTerm };
  }

  /**
   * Sets the digest of the report whose entries are now stored and searchable, on the open
   * write it began with; false when another write to the entries opened since (the next report
   * then reads the entries again).
   */
  async close(endpointId: string, opened: OpenWrite, digest: string, lastSeenFloor: string): Promise<boolean> {
    try {
      await this.docs.put(
        endpointId,
        { endpointId, digest, lastSeenFloor, updatedAt: new Date().toISOString() },
        { refresh: false, if_seq_no: opened.seqNo, if_primary_term: opened.primaryTerm },
      );
      return true;
    } catch (err) {
      if (err instanceof WriteConflictError) return false;
      throw err;
    }
  }
}
