/**
 * The inventory-digests index: per endpoint, the digest of the full report its stored
 * entries equal, so that an unchanged report is answered from one realtime get instead of a
 * search of every entry (docs/adr/0151-an-unchanged-inventory-report-read-by-its-digest.md).
 *
 * A digest is a claim the store can withdraw: every write to an endpoint's entries first (a full
 * report) or afterwards (a single-entry change, and a report refused its digest) replaces it
 * with an open one, and a report sets its digest only conditionally on the open one it wrote
 * itself, so a concurrent writer's entry can never hide behind it.
 */
import type { StoreContext } from '../../store/client.js';
import { DocStore } from '../../store/doc-store.js';
import { WriteConflictError } from '../../errors.js';
import { conditionOn, type Conditional } from '../../store/versions.js';

export interface InventoryDigestDoc {
  endpointId: string;
  /** The report's digest (model.ts reportDigest); null while a write to the entries is open. */
  digest: string | null;
  /** The oldest lastSeen among the entries the digest covers. */
  lastSeenFloor: string | null;
  updatedAt: string;
}

/** The digest document of an endpoint whose entries a write has opened: no digest holds. */
export function openDigestDoc(endpointId: string): InventoryDigestDoc {
  return { endpointId, digest: null, lastSeenFloor: null, updatedAt: new Date().toISOString() };
}

/** The digest document of a report whose entries are stored, their oldest lastSeen `lastSeenFloor`. */
export function reportDigestDoc(endpointId: string, digest: string, lastSeenFloor: string): InventoryDigestDoc {
  return { endpointId, digest, lastSeenFloor, updatedAt: new Date().toISOString() };
}

/**
 * True when `held` is the digest of the report `digest` and no entry it covers is past the
 * lastSeen window: the full path would write nothing.
 */
export function holdsReport(held: InventoryDigestDoc | undefined, digest: string, nowMs: number, lastSeenRefreshMs: number): boolean {
  return held?.digest === digest && held.lastSeenFloor !== null && nowMs - Date.parse(held.lastSeenFloor) < lastSeenRefreshMs;
}

/** Gets coalesced as the endpoints' are: a report reads its endpoint and its digest side by side. */
const DIGEST_READS = { maxBatch: 500, maxInFlight: 2 };

export class InventoryDigests {
  private readonly docs: DocStore<InventoryDigestDoc>;

  constructor(ctx: StoreContext) {
    this.docs = new DocStore<InventoryDigestDoc>(ctx, 'inventory-digests', 'inventory digest', { reads: DIGEST_READS });
  }

  /** The endpoint's digest document as the store holds it now (realtime); undefined when it has none. */
  async read(endpointId: string): Promise<InventoryDigestDoc | undefined> {
    return (await this.docs.get(endpointId))?.doc;
  }

  /**
   * Withdraws the endpoint's digest: before a report reads its entries, after a single-entry
   * write. Unconditional, so that it also overrules a report's digest being set meanwhile.
   * Returns the condition a report sets its own digest on.
   */
  async open(endpointId: string): Promise<Conditional> {
    return conditionOn(await this.docs.put(endpointId, openDigestDoc(endpointId), { refresh: false }));
  }

  /**
   * Sets the digest of the report whose entries are now stored and searchable, on the open
   * write it began with; false when another write to the entries opened since. A refused report
   * that wrote entries then opens again, after its writes: a concurrent report that read before
   * them may have set its digest (docs/adr/0152-a-refused-report-withdraws-the-digest-after-its-writes.md).
   */
  async close(endpointId: string, opened: Conditional, digest: string, lastSeenFloor: string): Promise<boolean> {
    try {
      await this.docs.put(endpointId, reportDigestDoc(endpointId, digest, lastSeenFloor), { refresh: false, ...opened });
      return true;
    } catch (err) {
      if (err instanceof WriteConflictError) return false;
      throw err;
    }
  }
}
