/** The network-heartbeats index: every NetworkHeartbeat, time-ordered; the only code that touches it. */
import crypto from 'node:crypto';
import { DocStore, type Query, type SearchResult, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../http/paging.js';
import type { NetworkHeartbeatDoc } from './model.js';

/**
 * A retried heartbeat (same endpoint, same timestamp) overwrites itself instead of
 * duplicating; hashed because the endpoint id is not looked up and could exceed the
 * 512-byte document id limit.
 */
export function heartbeatId(endpointId: string, timestamp: string): string {
  return crypto.createHash('sha256').update(`${endpointId}\u0000${new Date(timestamp).toISOString()}`).digest('hex').slice(0, 40);
}

export class HeartbeatStore {
  private readonly docs: DocStore<NetworkHeartbeatDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<NetworkHeartbeatDoc>(ctx, 'network-heartbeats', 'network heartbeat');
  }

  /** Hot-path write: keyed (idempotent) and without a forced refresh. */
  put(doc: NetworkHeartbeatDoc): Promise<Stored<NetworkHeartbeatDoc>> {
    return this.docs.put(doc.id, doc, { refresh: false });
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<NetworkHeartbeatDoc>> {
    return this.docs.search({ query, ...page });
  }
}
