/**
 * Network heartbeats and discovered hosts (spec 4.9): a heartbeat is stored and upserts the
 * NetworkHost of its host address; discovery reports upsert hosts in bulk; operators set a
 * host's status and search hosts.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../errors.js';
import { RecentMap } from '../../recent-map.js';
import { toPage, type Page } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import type { PageRequest } from '../../domain.js';
import type { Query, Stored } from '../../store/doc-store.js';
import type { Logger } from '../../log.js';
import { heartbeatId, type HeartbeatStore } from './heartbeat-store.js';
import { OPTIMISTIC_ATTEMPTS, pauseAfterConflict, readModifyWrite } from '../../store/optimistic.js';
import type { HostWrite, NetworkHostStore } from './host-store.js';
import type { PitSearch } from '../../store/scan.js';
import {
  foldSightings,
  mergeSighting,
  parseMac,
  sightingId,
  type HostSighting,
  type NetworkHeartbeat,
  type NetworkHost,
  type NetworkHostSearchCriteria,
  type NetworkHostStatus,
} from './model.js';
import { conditionOn } from '../../store/doc-types.js';

/**
 * Hosts whose version this instance last read or wrote. A heartbeat of one writes on that
 * version without reading first; a version another writer has moved on costs one conflict,
 * then the read it would have cost anyway. Beyond this many, heartbeats read first.
 */
export const KNOWN_HOSTS = 20_000;

/** Most hosts one discovery report may carry (413 beyond). */
export const MAX_DISCOVERED_HOSTS = 1000;

export const HOST_SORT_FIELDS: Readonly<Record<string, string>> = {
  lastSeen: 'lastSeen',
  ipAddress: 'ipAddress',
  macAddress: 'macAddress',
  status: 'status',
  orgId: 'orgId',
};

export interface DiscoveredHostsResult {
  received: number;
  created: number;
  updated: number;
  unchanged: number;
}

export class NetworkService {
  private readonly known = new RecentMap<string, Stored<NetworkHost>>(KNOWN_HOSTS);

  constructor(
    private readonly heartbeats: HeartbeatStore,
    private readonly hosts: NetworkHostStore,
    private readonly log: Logger,
    /** A heartbeat of an endpoint's sensor is a sign of life of the endpoint. */
    private readonly presence?: { seen(endpointId: string, access: Access): Promise<void> },
  ) {}

  /**
   * POST /network-heartbeat: stores the heartbeat and upserts its host, concurrently. A known
   * host (its version remembered) costs no read: both writes are items of bulk requests shared
   * with the concurrent heartbeats, so a heartbeat is one round trip. Neither write forces a
   * refresh except a host's first sighting, so a new host is searchable at once.
   */
  async recordHeartbeat(input: Omit<NetworkHeartbeat, 'timestamp'> & { timestamp?: string }, access: Access): Promise<NetworkHeartbeat> {
    await access.assertOrg(input.orgId);
    const hb: NetworkHeartbeat = { ...input, timestamp: input.timestamp ?? new Date().toISOString() };
    await Promise.all([
      this.heartbeats.put({ id: heartbeatId(hb.endpointId, hb.timestamp), ...hb }),
      this.upsertHost({ orgId: hb.orgId, ipAddress: hb.hostAddress, lastSeen: hb.timestamp }),
      this.presence?.seen(hb.endpointId, access),
    ]);
    return hb;
  }

  /**
   * Read (or take the remembered version), merge, write conditionally; on a conflict read again.
   * A known host's write joins the hot path's group commit; a new host's create is searchable
   * when it answers.
   */
  private upsertHost(s: HostSighting): Promise<NetworkHost> {
    const id = sightingId(s);
    let remembered = this.known.get(id);
    return readModifyWrite(async () => {
      const current = remembered ?? (await this.hosts.get(id));
      // Only the first attempt trusts memory: after a conflict the store is read.
      remembered = undefined;
      const { host, changed } = mergeSighting(current?.doc, s, id);
      if (!changed) {
        if (current) this.remember(current);
        return host;
      }
      try {
        if (!current) this.remember(await this.hosts.create(host));
        else {
          const cond = conditionOn(current);
          this.remember({ id, doc: host, writeIds: cond.priorWriteIds, ...(await this.hosts.replaceCoalesced(host, cond)) });
        }
      } catch (err) {
        this.known.delete(id);
        throw err;
      }
      return host;
    });
  }

  /** Keeps the newer of two versions of a host (concurrent heartbeats answer in any order). */
  private remember(h: Stored<NetworkHost>): void {
    const prev = this.known.get(h.id);
    if (prev && (prev.primaryTerm > h.primaryTerm || (prev.primaryTerm === h.primaryTerm && prev.seqNo >= h.seqNo))) return;
    this.known.set(h.id, h);
  }

  /** GET /network-heartbeat/endpoint/{endpointId} (extension): newest first, optionally a time range. */
  async listHeartbeats(
    endpointId: string,
    range: { from?: string; to?: string },
    pr: PageRequest,
    access: Access,
  ): Promise<Page<NetworkHeartbeat>> {
    const filter: Query[] = [{ term: { endpointId } }];
    const orgs = await access.orgFilter();
    if (orgs) filter.push(orgs);
    if (range.from || range.to) filter.push({ range: { timestamp: { gte: range.from, lt: range.to } } });
    const res = await this.heartbeats.search(
      { bool: { filter } },
      pageQuery({ ...pr, sort: [] }, { timestamp: 'timestamp' }, [{ field: 'timestamp', direction: 'DESC' }]),
    );
    return toPage(
      pr,
      res.total,
      res.items.map((h) => {
        const { id: _id, ...hb } = h.doc;
        return hb;
      }),
    );
  }

  /**
   * POST /network-host/discovered (extension): folds the report by host, reads the known hosts
   * in one multi-get and writes the changes in one bulk request; lost races are re-read and
   * retried a few times.
   */
  async ingestDiscovered(sightings: HostSighting[], access: Access): Promise<DiscoveredHostsResult> {
    if (sightings.length > MAX_DISCOVERED_HOSTS) {
      throw new PayloadTooLargeError(`a discovery report carries at most ${MAX_DISCOVERED_HOSTS} hosts (got ${sightings.length}); split it`);
    }
    for (const org of new Set(sightings.map((s) => s.orgId))) await access.assertOrg(org);
    const folded = foldSightings(sightings);
    const result: DiscoveredHostsResult = { received: sightings.length, created: 0, updated: 0, unchanged: 0 };
    let pending = [...folded.keys()];
    for (let attempt = 1; pending.length > 0; attempt++) {
      const current = new Map((await this.hosts.getMany(pending)).map((h) => [h.id, h] as const));
      const writes: HostWrite[] = [];
      for (const id of pending) {
        const stored: Stored<NetworkHost> | undefined = current.get(id);
        const { host, changed } = mergeSighting(stored?.doc, folded.get(id) as HostSighting, id);
        if (!changed) result.unchanged++;
        // A bulk action takes the seq_no condition only (a bulk write carries no write ids).
        else writes.push(stored ? { host, cond: { if_seq_no: stored.seqNo, if_primary_term: stored.primaryTerm } } : { host });
      }
      const outcome = await this.hosts.bulkWrite(writes);
      if (outcome.failed.length > 0) {
        this.log.error({ failed: outcome.failed.slice(0, 10) }, 'network host bulk write failed');
        throw new Error(`network host bulk write failed for ${outcome.failed.length} host(s)`);
      }
      const lost = new Set(outcome.conflicted);
      for (const w of writes) {
        if (lost.has(w.host.id)) continue;
        if (w.cond) result.updated++;
        else result.created++;
      }
      pending = [...lost];
      if (pending.length > 0 && attempt >= OPTIMISTIC_ATTEMPTS) {
        throw new ConflictError(`${pending.length} host(s) kept changing concurrently; retry the report (it is idempotent)`);
      }
      if (pending.length > 0) await pauseAfterConflict(attempt);
    }
    return result;
  }

  /** PUT /network-host/{id}/status/{status}. */
  async setStatus(id: string, status: NetworkHostStatus, access: Access): Promise<NetworkHost> {
    // A heartbeat moving lastSeen between the read and the write makes it read again and keep it.
    return readModifyWrite(async () => {
      const hit = await this.hosts.get(id);
      if (!hit) throw new NotFoundError(`network host ${id} not found`);
      await access.assertOrg(hit.doc.orgId);
      if (hit.doc.status === status) return hit.doc;
      const host = { ...hit.doc, status };
      await this.hosts.replace(host, conditionOn(hit));
      return host;
    });
  }

  /** POST /network-host/search-page: every criteria field is an exact filter (ipAddress may be a CIDR block). */
  async search(criteria: NetworkHostSearchCriteria, pr: PageRequest, access: Access): Promise<Page<NetworkHost>> {
    const res = await this.hosts.search(
      await this.hostQuery(criteria, access),
      pageQuery(pr, HOST_SORT_FIELDS, [{ field: 'lastSeen', direction: 'DESC' }]),
    );
    return toPage(pr, res.total, res.items.map((h) => h.doc));
  }

  /** The same search prepared for cursors and exports. */
  async deepSearch(criteria: NetworkHostSearchCriteria, pr: PageRequest, access: Access): Promise<PitSearch<NetworkHost, NetworkHost>> {
    const sort = pageQuery({ ...pr, page: 0 }, HOST_SORT_FIELDS, [{ field: 'lastSeen', direction: 'DESC' }]).sort;
    return this.hosts.deep(await this.hostQuery(criteria, access), sort);
  }

  private async hostQuery(criteria: NetworkHostSearchCriteria, access: Access): Promise<Query> {
    const filter: Query[] = [];
    if (criteria.orgId !== undefined) {
      await access.assertOrg(criteria.orgId);
      filter.push({ term: { orgId: criteria.orgId } });
    } else {
      const orgs = await access.orgFilter();
      if (orgs) filter.push(orgs);
    }
    if (criteria.ipAddress !== undefined) filter.push({ term: { ipAddress: criteria.ipAddress } });
    if (criteria.macAddress !== undefined) {
      const mac = parseMac(criteria.macAddress);
      if (!mac) throw new ValidationError(`body.criteria.macAddress: ${criteria.macAddress} is not a MAC address`);
      filter.push({ term: { macAddress: mac } });
    }
    if (criteria.status !== undefined) filter.push({ term: { status: criteria.status } });
    return { bool: { filter } };
  }

  /** GET /network-host/{id} (extension): realtime read. */
  async getHost(id: string, access: Access): Promise<NetworkHost> {
    const hit = await this.hosts.get(id);
    if (!hit) throw new NotFoundError(`network host ${id} not found`);
    await access.assertOrg(hit.doc.orgId);
    return hit.doc;
  }
}
