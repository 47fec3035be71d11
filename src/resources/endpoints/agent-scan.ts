/**
 * Long reads over the agents matching EndpointCriteria, for bulk work (jobs): the
 * same query the page search builds (criteria.ts), limited to an organization scope,
 * counted or streamed in `id` order from after a checkpoint. Part of the
 * endpoints resource's service surface: other resources scan agents through this, never
 * through the store.
 */
import type { Query } from '../../store/doc-store.js';
import { endpointCriteriaQuery, type EndpointCriteria } from './criteria.js';
import type { EndpointStore } from './store.js';
import type { EndpointDoc } from './model.js';
import type { Stored } from '../../store/doc-store.js';

/** An agent as a rollout judges it: its OS, the version it reports, and its presence (applied on read). */
export interface FleetAgent {
  id: string;
  orgId: string;
  /** hostInfo's os, platformFamily and platform, for the catalogue's OS. */
  host: EndpointDoc['hostInfo'];
  clientVersion?: string;
  connectionStatus?: EndpointDoc['connectionStatus'];
  lastSeen?: string;
  deleted: boolean;
}

function fleetAgent(h: Stored<EndpointDoc>): FleetAgent {
  const d = h.doc;
  return {
    id: d.id,
    orgId: d.orgId,
    host: d.hostInfo,
    ...(d.clientVersion ? { clientVersion: d.clientVersion } : {}),
    ...(d.connectionStatus ? { connectionStatus: d.connectionStatus } : {}),
    ...(d.lastSeen ? { lastSeen: d.lastSeen } : {}),
    deleted: d.deleted === true,
  };
}

/** One matching agent, as a bulk action needs it. */
export interface ScannedAgent {
  id: string;
  orgId: string;
}

export class AgentScan {
  constructor(private readonly store: EndpointStore) {}

  /** The page search's query within `scope` (undefined: unrestricted), after `afterId` when given. */
  private async query(c: EndpointCriteria, scope: Query | undefined, now: number, afterId?: string): Promise<Query> {
    // Presence decides POTENTIALLY_DISCONNECTED inside the query, as the page search's does.
    const base = endpointCriteriaQuery(c, scope, now, await this.store.presence?.view());
    return afterId === undefined ? base : { bool: { filter: [base, { range: { id: { gt: afterId } } }] } };
  }

  /** How many agents match (after `afterId` when given). */
  async count(c: EndpointCriteria, scope: Query | undefined, now: number, afterId?: string): Promise<number> {
    return this.store.count(await this.query(c, scope, now, afterId));
  }

  /** How many agents match in each organization (a job's dry run), largest first. */
  async countByOrg(c: EndpointCriteria, scope: Query | undefined, now: number): Promise<{ orgId: string; count: number }[]> {
    const buckets = await this.store.termsAll(await this.query(c, scope, now), 'orgId');
    return buckets.map((b) => ({ orgId: b.key, count: b.count })).sort((a, b) => b.count - a.count || a.orgId.localeCompare(b.orgId));
  }

  /**
   * Streams the matching agents in `id` order, after `afterId` when given, in batches of
   * `batchSize`: one point in time for the whole stream, search_after between batches.
   */
  async *scan(
    c: EndpointCriteria,
    scope: Query | undefined,
    now: number,
    opts: { afterId?: string; batchSize: number },
  ): AsyncGenerator<ScannedAgent[]> {
    for await (const batch of this.store.scan(await this.query(c, scope, now, opts.afterId), opts.batchSize)) {
      yield batch.map((h) => ({ id: h.doc.id, orgId: h.doc.orgId }));
    }
  }

  /** Every agent of `scope`, in `id` order, as a rollout judges it (one point in time, batches of `batchSize`). */
  async *scanFleet(scope: Query | undefined, batchSize: number): AsyncGenerator<FleetAgent[]> {
    for await (const batch of this.store.scan(endpointCriteriaQuery({}, scope, Date.now()), batchSize)) yield batch.map(fleetAgent);
  }

  /** Many agents by id in one multi-get, presence applied; absent ones are left out. */
  async readFleet(ids: string[]): Promise<FleetAgent[]> {
    if (ids.length === 0) return [];
    return (await this.store.getMany(ids)).map(fleetAgent);
  }
}
