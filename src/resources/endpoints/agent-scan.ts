/**
 * Long reads over the agents matching EndpointCriteria, for bulk work (jobs): the
 * same query the page search builds (criteria.ts), limited to an explicit list of
 * organizations, counted or streamed in `id` order from after a checkpoint. Part of the
 * endpoints resource's service surface: other resources scan agents through this, never
 * through the store.
 */
import type { Query } from '../../store/doc-store.js';
import { endpointCriteriaQuery, type EndpointCriteria } from './criteria.js';
import type { EndpointStore } from './store.js';

/** One matching agent, as a bulk action needs it. */
export interface ScannedAgent {
  id: string;
  orgId: string;
}

export class AgentScan {
  constructor(private readonly store: EndpointStore) {}

  /** The page search's query, AND-ed with `orgs` (undefined: unrestricted), after `afterId` when given. */
  private async query(c: EndpointCriteria, orgs: string[] | undefined, now: number, afterId?: string): Promise<Query> {
    // Presence decides POTENTIALLY_DISCONNECTED inside the query, as the page search's does.
    const base = endpointCriteriaQuery(c, orgs, now, await this.store.presence?.view());
    return afterId === undefined ? base : { bool: { filter: [base, { range: { id: { gt: afterId } } }] } };
  }

  /** How many agents match (after `afterId` when given). */
  async count(c: EndpointCriteria, orgs: string[] | undefined, now: number, afterId?: string): Promise<number> {
    return this.store.count(await this.query(c, orgs, now, afterId));
  }

  /**
   * Streams the matching agents in `id` order, after `afterId` when given, in batches of
   * `batchSize`: one point in time for the whole stream, search_after between batches.
   */
  async *scan(
    c: EndpointCriteria,
    orgs: string[] | undefined,
    now: number,
    opts: { afterId?: string; batchSize: number },
  ): AsyncGenerator<ScannedAgent[]> {
    for await (const batch of this.store.scan(await this.query(c, orgs, now, opts.afterId), opts.batchSize)) {
      yield batch.map((h) => ({ id: h.doc.id, orgId: h.doc.orgId }));
    }
  }
}
