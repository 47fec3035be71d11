/**
 * The scenarios: each one HTTP operation of the service and its direct equivalent, the same
 * Elasticsearch requests issued with @elastic/elasticsearch (built with the service's own
 * pure query builders, so the bodies are the ones the service sends).
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import { aliasName } from '../src/store/client.js';
import { pageQuery } from '../src/store/page-query.js';
import { PageCounts } from '../src/store/page-total.js';
import { endpointCriteriaQuery, utmCriteriaQuery } from '../src/resources/endpoints/criteria.js';
import { ENDPOINT_SORT, UTM_SORT } from '../src/resources/endpoints/schema.js';
import { heartbeatId } from '../src/resources/network/heartbeat-store.js';
import { mergeSighting, networkHostId, type NetworkHost } from '../src/resources/network/model.js';
import { agentOrg, ancestryOf, type Seeded } from './seed.js';
import { inventoryScenarios } from './inventory-scenarios.js';
import { API, type Scenario, type ScenarioContext } from './scenario.js';

/** The UTM model aggregation's search over a subtree, as the service sends it. */
function utmModelAggregation(client: Client, endpoints: string, orgId: string): Promise<unknown> {
  return client.search({
    index: endpoints,
    size: 0,
    track_total_hits: false,
    seq_no_primary_term: true,
    version: true,
    query: utmCriteriaQuery({}, { term: { orgPath: orgId } }),
    aggs: { buckets: { composite: { size: 1000, sources: [{ key: { terms: { field: 'model' } } }] } } } as Record<string, estypes.AggregationsAggregationContainer>,
  });
}

/**
 * A page as the service's store asks it (src/store/page-total.ts, with its memory of queries past
 * the bound): the hits counting to the bound, then, past it, the count alone; once a query was
 * seen past the bound, its uncounted hits and its count in one multi-search. `cache: false`
 * keeps every search out of the request cache.
 */
async function pageAsSent(client: Client, index: string, req: estypes.SearchSearchRequestBody, counts: PageCounts, cache = true): Promise<unknown> {
  const plan = counts.plan(req);
  if (!plan) throw new Error('not a page that counts its total');
  const header = cache ? {} : { request_cache: false };
  const hits = { seq_no_primary_term: true, version: true, ...plan.hits };
  const totalOf = (r: { hits: { total?: number | estypes.SearchTotalHits } }): estypes.SearchTotalHits =>
    typeof r.hits.total === 'object' ? r.hits.total : { value: r.hits.total ?? 0, relation: 'eq' };
  if (plan.together) {
    const res = await client.msearch({ index, searches: [header, hits, header, plan.count] });
    const count = res.responses[1];
    if (!('error' in count)) counts.counted(req, totalOf(count).value);
    return res;
  }
  const page = await client.search({ index, ...header, ...hits });
  if (totalOf(page).relation !== 'gte') return page;
  const count = await client.search({ index, ...header, ...plan.count });
  counts.counted(req, totalOf(count).value);
  return count;
}

/** The distributor's first page as the service sends it (docs/adr/0134), never from the request cache. */
function distributorFirstPage(client: Client, endpoints: string, distributor: string, counts: PageCounts): Promise<unknown> {
  const query = endpointCriteriaQuery({}, { term: { orgPath: distributor } });
  return pageAsSent(client, endpoints, { query, ...pageQuery({ page: 0, size: 20 }, ENDPOINT_SORT) }, counts, false);
}

/**
 * A write every 100 ms to one endpoint of the distributor's subtree, searchable at once: each
 * one clears the request cache of the endpoints' shard, so the service's pages are computed
 * anew ten times a second, as on a fleet that reports in. Answers a stop that counts the writes.
 */
function writerEvery100ms(client: Client, endpoints: string, endpointId: string): () => Promise<number> {
  let running = true;
  let writes = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      // A refused write (429 under load) is counted as not written, never the end of the run.
      const wrote = await client.update({ index: endpoints, id: endpointId, doc: { updatedAt: new Date().toISOString() }, refresh: true }).then(
        () => true,
        () => false,
      );
      if (wrote) writes++;
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - started))));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return writes;
  };
}

/** The distributor admin's view: its agents' first page, its UTM count and UTM model aggregation, all over its whole subtree. */
function distributorScenarios(client: Client, endpoints: string, distributor: string, subtreeAgent: string): Scenario[] {
  const scope = { term: { orgPath: distributor } };
  const pageRequest = { page: 0, size: 20 };
  const utm = { orgId: distributor, includeChildren: true };
  const distributorCounts = new PageCounts();
  const firstPage: Pick<Scenario, 'caller' | 'service' | 'direct' | 'directWork'> = {
    caller: 'distributor',
    service: () => ({ method: 'POST', path: `${API}/endpoint/page-search`, body: JSON.stringify({ criteria: {}, pageRequest }) }),
    direct: () => distributorFirstPage(client, endpoints, distributor, distributorCounts),
    directWork: 'the same searches as the service (past the bound: uncounted hits and the count in one multi-search), without the request cache',
  };
  return [
    {
      ...firstPage,
      name: 'distributor page-search',
      serviceWork:
        "POST /endpoint/page-search {} by an admin of the distributor, 20 per page: its whole subtree (one term on the records' ancestry), sorted by id, " +
        'a query past 10,000 matches: its uncounted hits and its exact count in one multi-search',
    },
    {
      ...firstPage,
      name: 'distributor page-search, a write every 100 ms',
      serviceWork: 'the distributor page-search while one of its endpoints is written every 100 ms with refresh=true (each write clears the request cache)',
      background: () => writerEvery100ms(client, endpoints, subtreeAgent),
    },
    {
      name: 'distributor count',
      caller: 'distributor',
      serviceWork: 'POST /utm-endpoint/count {orgId: distributor, includeChildren: true} by its admin: one count',
      directWork: 'the same count',
      service: () => ({ method: 'POST', path: `${API}/utm-endpoint/count`, body: JSON.stringify(utm) }),
      direct: () => client.count({ index: endpoints, query: utmCriteriaQuery({}, scope) }),
    },
    {
      name: 'distributor aggregation',
      caller: 'distributor',
      serviceWork: 'POST /utm-endpoint/model/aggregation {orgId: distributor, includeChildren: true} by its admin: one composite aggregation',
      directWork: 'the same search (size 0, composite terms on model)',
      service: () => ({ method: 'POST', path: `${API}/utm-endpoint/model/aggregation`, body: JSON.stringify(utm) }),
      direct: () => utmModelAggregation(client, endpoints, distributor),
    },
  ];
}

/** The first seeded agent in `root`'s subtree (the seed's placement rule). */
function agentBelow(seeded: Seeded, root: string): string {
  const rootOf = (org: string): string => {
    let at = org;
    for (let up = seeded.parents.get(at); up !== undefined; up = seeded.parents.get(at)) at = up;
    return at;
  };
  const i = seeded.agentIds.findIndex((_, k) => rootOf(agentOrg(seeded.orgs, k)) === root);
  if (i < 0) throw new Error(`no seeded agent below ${root}`);
  return seeded.agentIds[i];
}

const pick = <T>(list: readonly T[], i: number): T => list[(i * 7919) % list.length];

export function scenarios(x: ScenarioContext): Scenario[] {
  const { client, seeded, root } = x;
  const orgPath = ancestryOf(seeded);
  const endpoints = aliasName(x.prefix, 'endpoints');
  const heartbeats = aliasName(x.prefix, 'network-heartbeats');
  const hosts = aliasName(x.prefix, 'network-hosts');
  const searchRequest = { criteria: { orgId: root, basic: 'front' }, pageRequest: { page: 0, size: 20 } };
  const utmSearchRequest = { criteria: { orgId: root, includeChildren: true }, pageRequest: { page: 0, size: 20 } };
  /** The hop's memory of queries past the bound, as the service's endpoints store keeps one. */
  const pageCounts = new PageCounts();

  return [
    {
      name: 'connect',
      serviceWork: 'POST /endpoint/{id}/connect (system token): one partial update, refresh=false, the document returned (deleted → 404)',
      directWork: 'update {connectionStatus, lastConnect}, retry_on_conflict 3, _source, refresh=false',
      service: (next) => ({ method: 'POST', setupRequest: (r) => ({ ...r, path: `${API}/endpoint/${pick(seeded.agentIds, next())}/connect` }) }),
      direct: (i) =>
        client.update({
          index: endpoints,
          id: pick(seeded.agentIds, i),
          doc: { connectionStatus: 'CONNECTED', lastConnect: new Date().toISOString() },
          retry_on_conflict: 3,
          _source: true,
          refresh: false,
        }),
    },
    {
      name: 'get endpoint',
      serviceWork: 'GET /endpoint/{id}: one realtime get',
      directWork: 'get (realtime)',
      service: (next) => ({ method: 'GET', setupRequest: (r) => ({ ...r, path: `${API}/endpoint/${pick(seeded.agentIds, next())}` }) }),
      direct: (i) => client.get({ index: endpoints, id: pick(seeded.agentIds, i) }),
    },
    {
      name: 'page-search (orgId + basic)',
      serviceWork:
        'POST /endpoint/page-search {orgId: root MSP, basic: "front"}, 20 per page: one search (sorted by id, counting to 10,000; the count apart past it); EndpointCriteria has no includeChildren (spec 2.2)',
      directWork: 'the same search body (and the count past the bound)',
      service: () => ({ method: 'POST', path: `${API}/endpoint/page-search`, body: JSON.stringify(searchRequest) }),
      direct: () =>
        pageAsSent(client, endpoints, { query: endpointCriteriaQuery({ basic: 'front' }, { term: { orgId: root } }), ...pageQuery(searchRequest.pageRequest, ENDPOINT_SORT) }, pageCounts),
    },
    {
      name: 'UTM page-search (orgId + includeChildren)',
      serviceWork: 'POST /utm-endpoint/searchPage {orgId: root MSP, includeChildren: true}, 20 per page: one term on the ancestry of the records, one search',
      directWork: 'the same search body (one term on the ancestry of the records)',
      service: () => ({ method: 'POST', path: `${API}/utm-endpoint/searchPage`, body: JSON.stringify(utmSearchRequest) }),
      direct: () => pageAsSent(client, endpoints, { query: utmCriteriaQuery({}, { term: { orgPath: root } }), ...pageQuery(utmSearchRequest.pageRequest, UTM_SORT) }, pageCounts),
    },
    {
      name: 'UTM model aggregation',
      serviceWork: 'POST /utm-endpoint/model/aggregation {orgId: root MSP, includeChildren: true}: one composite aggregation',
      directWork: 'the same search (size 0, composite terms on model)',
      service: () => ({ method: 'POST', path: `${API}/utm-endpoint/model/aggregation`, body: JSON.stringify({ orgId: root, includeChildren: true }) }),
      direct: () => utmModelAggregation(client, endpoints, root),
    },
    {
      name: 'UTM count (orgId + includeChildren)',
      serviceWork: 'POST /utm-endpoint/count {orgId: root MSP, includeChildren: true}: one count over the subtree (one term on the ancestry)',
      directWork: 'the same count',
      service: () => ({ method: 'POST', path: `${API}/utm-endpoint/count`, body: JSON.stringify({ orgId: root, includeChildren: true }) }),
      direct: () => client.count({ index: endpoints, query: utmCriteriaQuery({}, { term: { orgPath: root } }) }),
    },
    ...inventoryScenarios(x),
    {
      name: 'network heartbeat',
      serviceWork:
        'POST /network-heartbeat from a sensor whose host is known: the heartbeat and the host rewritten conditionally on the version this instance remembers (no read), each an item of a bulk shared with the concurrent heartbeats (refresh=false)',
      directWork: 'the same, each record with its ancestry as the service stamps it: index of the heartbeat ‖ get + conditional index of the host',
      service: (next) => ({
        method: 'POST',
        setupRequest: (r) => {
          const s = seeded.sensors[next() % seeded.sensors.length];
          return {
            ...r,
            path: `${API}/network-heartbeat`,
            body: JSON.stringify({ ...s, externalAddress: '198.51.100.7', networkAddress: '10.1.0.0', subnetMask: '255.255.0.0', defaultGateway: '10.1.0.1', operatingSystem: 'linux', pcapVersion: '1.10' }),
          };
        },
      }),
      direct: async (i) => {
        const s = seeded.sensors[i % seeded.sensors.length];
        const timestamp = new Date().toISOString();
        const hb = { ...s, externalAddress: '198.51.100.7', networkAddress: '10.1.0.0', subnetMask: '255.255.0.0', defaultGateway: '10.1.0.1', operatingSystem: 'linux', pcapVersion: '1.10', timestamp };
        const hostId = networkHostId(s.orgId, undefined, s.hostAddress);
        const path = orgPath(s.orgId);
        await Promise.all([
          client.index({ index: heartbeats, id: heartbeatId(s.endpointId, timestamp), document: { id: heartbeatId(s.endpointId, timestamp), ...hb, orgPath: path }, refresh: false }),
          (async () => {
            const cur = await client.get<NetworkHost>({ index: hosts, id: hostId }, { ignore: [404] });
            const { host } = mergeSighting(cur._source, { orgId: s.orgId, ipAddress: s.hostAddress, lastSeen: timestamp }, hostId);
            await client.index(
              { index: hosts, id: hostId, document: { ...host, orgPath: path }, if_seq_no: cur._seq_no, if_primary_term: cur._primary_term, refresh: false },
              { ignore: [409] },
            );
          })(),
        ]);
      },
    },
    ...distributorScenarios(client, endpoints, x.distributor, agentBelow(seeded, x.distributor)),
  ];
}
