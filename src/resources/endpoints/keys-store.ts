/**
 * The endpoint-keys index: one create-only document per unique lookup key (UTM serial,
 * MAC, common name; LTE IMEI + site) naming the endpoint that holds it. Elasticsearch has
 * no unique constraint; a create-only write on a deterministic id is one. Only realtime
 * gets read it, so its writes never refresh.
 */
import crypto from 'node:crypto';
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { ConflictError, NotFoundError } from '../../errors.js';

export interface EndpointKeyDoc {
  key: string;
  endpointId: string;
  claimedAt: string;
}

/** Document id of a key: the key itself while short enough, else its SHA-256. */
function docId(key: string): string {
  return Buffer.byteLength(key, 'utf8') <= 480 ? key : `sha256:${crypto.createHash('sha256').update(key).digest('hex')}`;
}

export class EndpointKeyStore {
  private readonly docs: DocStore<EndpointKeyDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<EndpointKeyDoc>(ctx, 'endpoint-keys', 'endpoint key');
  }

  /** Realtime get of a key. */
  get(key: string): Promise<Stored<EndpointKeyDoc> | undefined> {
    return this.docs.get(docId(key));
  }

  /** Create-only claim: false when the key is already held. */
  async create(key: string, endpointId: string): Promise<boolean> {
    try {
      await this.docs.create(docId(key), { key, endpointId, claimedAt: new Date().toISOString() }, { refresh: false });
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Takes a key over from a stale holder, conditional on the read that found it stale. */
  async takeOver(key: string, endpointId: string, read: Stored<EndpointKeyDoc>): Promise<boolean> {
    try {
      await this.docs.put(
        docId(key),
        { key, endpointId, claimedAt: new Date().toISOString() },
        { refresh: false, if_seq_no: read.seqNo, if_primary_term: read.primaryTerm },
      );
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Deletes a key if `endpointId` still holds it (missing or taken over: nothing to do). */
  async release(key: string, endpointId: string): Promise<void> {
    const hit = await this.get(key);
    if (!hit || hit.doc.endpointId !== endpointId) return;
    try {
      await this.docs.delete(docId(key), { refresh: false, if_seq_no: hit.seqNo, if_primary_term: hit.primaryTerm });
    } catch (err) {
      if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
    }
  }
}
