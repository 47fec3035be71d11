/**
 * The messages ready to deliver (CREATED or RETRY, not expired) of many endpoints at once: the
 * agent channel reads them in one search per batch of woken endpoints, never one per agent.
 */
import type { Query } from '../../store/doc-store.js';
import type { CommandExpiry } from './expiry.js';
import { WAITING_STATUSES } from './expiry.js';
import type { EndpointCommandMessage } from './model.js';
import { toCommandMessage, type CommandMessageStore } from './store.js';

/** The most hits one read returns (Elasticsearch's result window). */
const MAX_HITS = 10_000;

export class ReadyMessages {
  constructor(
    private readonly messages: CommandMessageStore,
    private readonly expiry: CommandExpiry,
  ) {}

  /**
   * Per endpoint, its ready messages oldest first, at most `perEndpoint` each (an endpoint with
   * more gets the rest on its next wake). Endpoints without any are absent.
   */
  async readyFor(endpointIds: readonly string[], perEndpoint: number): Promise<Map<string, EndpointCommandMessage[]>> {
    const out = new Map<string, EndpointCommandMessage[]>();
    if (endpointIds.length === 0) return out;
    const query: Query = {
      bool: {
        filter: [{ terms: { endpointId: [...endpointIds] } }, { terms: { status: [...WAITING_STATUSES] } }],
        must_not: [this.expiry.expiredQuery()],
      },
    };
    const size = Math.min(MAX_HITS, endpointIds.length * perEndpoint);
    const res = await this.messages.search(query, {
      from: 0,
      size,
      sort: [{ createdAt: { order: 'asc' } }, { id: { order: 'asc' } }],
      track_total_hits: true,
    });
    for (const hit of res.items) {
      if (this.expiry.isExpired(hit.doc)) continue;
      const list = out.get(hit.doc.endpointId) ?? [];
      if (list.length >= perEndpoint) continue;
      list.push(toCommandMessage(hit));
      out.set(hit.doc.endpointId, list);
    }
    return out;
  }
}
