/**
 * Volume: 1,000 endpoints × 200 entries fed through the service's bulk path (the code a
 * full report runs after authorization), then the organization views checked through HTTP.
 * Its timing belongs to the benchmark, not to an assertion here.
 */
import { expect } from 'chai';
import { expectErrorBody, uid, type TestApp, sharedApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';
import type { InstalledSoftware } from '../../src/resources/software-inventory/model.js';
import { agentDoc, createEndpointDocs, refreshIndex } from '../helpers/endpoint-store.js';
import { SoftwareInventoryStore } from '../../src/resources/software-inventory/store.js';

interface Count {
  name: string;
  version: string;
  count: number;
}
interface Page<T> {
  totalCount: number;
  totalPages: number;
  items: T[];
}

const ENDPOINTS = 1000;
const COMMON = 150;
const VARIED = 50;
/** Versions of each varied product: endpoint e has version v(e % SPREAD). */
const SPREAD = 250;
/** Endpoints 0..9 are uninstalled, 10..19 deleted: their inventory must not count. */
const UNINSTALLED = 10;
const DELETED = 10;
const EXCLUDED = UNINSTALLED + DELETED;
const CONCURRENCY = 8;

function inventoryOf(e: number): InstalledSoftware[] {
  const items: InstalledSoftware[] = [];
  for (let k = 0; k < COMMON; k++) items.push({ name: `common-${String(k).padStart(3, '0')}`, version: '1.0', vendor: 'Acme' });
  for (let k = 0; k < VARIED; k++) items.push({ name: `varied-${String(k).padStart(2, '0')}`, version: `v${String(e % SPREAD).padStart(3, '0')}` });
  return items;
}

/** Endpoints counted for (varied-k, v j): those e ≥ EXCLUDED with e % SPREAD = j. */
function variedCount(j: number): number {
  let n = 0;
  for (let e = EXCLUDED; e < ENDPOINTS; e++) if (e % SPREAD === j) n++;
  return n;
}

describe('software inventory at volume: 1,000 endpoints × 200 entries', function () {
  this.timeout(600_000);
  let t: TestApp;
  let org: string;
  let reader: Api;
  const ids: string[] = [];

  before(async () => {
    t = await sharedApp();
    org = await t.world.org();
    reader = t.world.as(await t.world.token('reader', org));
    const docs: EndpointDoc[] = [];
    for (let e = 0; e < ENDPOINTS; e++) {
      const id = uid(`vol${e}`);
      ids.push(id);
      docs.push(
        agentDoc(id, org, {
          displayName: `host-${e}`,
          connectionStatus: e < UNINSTALLED ? 'UNINSTALLED' : 'CONNECTED',
          ...(e >= UNINSTALLED && e < EXCLUDED ? { deleted: true } : {}),
        }),
      );
    }
    await createEndpointDocs(t.server.store, docs);

    // Parallel batches through the bulk path; no forced refresh per endpoint, one at the end.
    const svc = t.server.handle.services.softwareInventory;
    let next = 0;
    const created: number[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let e = next++; e < ENDPOINTS; e = next++) {
          const r = await svc.replaceInventory({ id: ids[e], orgId: org }, inventoryOf(e), { refresh: false });
          created.push(r.created);
        }
      }),
    );
    expect(created.reduce((a, b) => a + b, 0)).to.equal(ENDPOINTS * (COMMON + VARIED));
    await refreshIndex(t.server.store, 'software-inventory');
  });

  it('stores one document per endpoint, name and version', async () => {
    expect(await new SoftwareInventoryStore(t.server.store).count({ term: { orgId: org } })).to.equal(ENDPOINTS * (COMMON + VARIED));
  });

  it('repeating every report is idempotent: nothing created, deleted or rewritten', async () => {
    const svc = t.server.handle.services.softwareInventory;
    const results = await Promise.all([0, 1, 499, 999].map((e) => svc.replaceInventory({ id: ids[e], orgId: org }, inventoryOf(e))));
    for (const r of results) expect(r).to.deep.equal({ created: 0, updated: 0, deleted: 0, unchanged: COMMON + VARIED });
  });

  it('the summary counts endpoints per (name, version), leaving out deleted and uninstalled endpoints', async () => {
    const res = await reader.get<Count[]>(`/org/${org}/software-inventory-summary`);
    expect(res.status).to.equal(200);
    expect(res.body).to.have.length(COMMON + VARIED * SPREAD);
    const byPair = new Map(res.body.map((c) => [`${c.name}@${c.version}`, c.count]));
    expect(byPair.get('common-000@1.0')).to.equal(ENDPOINTS - EXCLUDED);
    expect(byPair.get('common-149@1.0')).to.equal(ENDPOINTS - EXCLUDED);
    expect(byPair.get('varied-07@v000')).to.equal(variedCount(0));
    expect(byPair.get('varied-07@v030')).to.equal(variedCount(30));
    expect(res.body.reduce((a, c) => a + c.count, 0)).to.equal((ENDPOINTS - EXCLUDED) * (COMMON + VARIED));
  });

  it('the summary search-page pages past 10,000 distinct pairs in name order, stable and complete', async () => {
    const total = COMMON + VARIED * SPREAD; // 12,650
    const url = `/org/${org}/software-inventory-summary/search-page`;
    const size = 1000;
    const seen: string[] = [];
    for (let page = 0; page * size < total; page++) {
      const res = await reader.post<Page<Count>>(url, { pageRequest: { page, size } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.totalCount).to.equal(total);
      expect(res.body.totalPages).to.equal(Math.ceil(total / size));
      seen.push(...res.body.items.map((c) => `${c.name}@${c.version}`));
    }
    expect(seen).to.have.length(total);
    expect(new Set(seen).size).to.equal(total);
    expect(seen).to.deep.equal([...seen].sort());
    expect(seen[total - 1]).to.equal(`varied-49@v${SPREAD - 1}`);
    const beyond = await reader.post<Page<Count>>(url, { pageRequest: { page: 13, size } });
    expect(beyond.body.items).to.deep.equal([]);
  });

  it('sorted by count, the most common pairs come first; a name prefix narrows the summary', async () => {
    const url = `/org/${org}/software-inventory-summary/search-page`;
    const top = await reader.post<Page<Count>>(url, { pageRequest: { page: 0, size: 200, sort: [{ field: 'count', direction: 'DESC' }] } });
    expect(top.status).to.equal(200);
    expect(top.body.items.slice(0, COMMON).every((c) => c.name.startsWith('common-') && c.count === ENDPOINTS - EXCLUDED)).to.equal(true);
    expect(top.body.items[COMMON].count).to.equal(variedCount(EXCLUDED));
    const prefixed = await reader.post<Page<Count>>(url, { criteria: { namePrefix: 'VARIED-07' }, pageRequest: { size: 1000 } });
    expect(prefixed.body.totalCount).to.equal(SPREAD);
    expect(prefixed.body.items.every((c) => c.name === 'varied-07')).to.equal(true);
  });

  it('per (name, version) views list the endpoints having it, with names from one mget per batch', async () => {
    const res = await reader.get<{ endpointId: string; endpointName?: string }[]>(`/org/${org}/endpoint-software-inventory/common-042/1.0`);
    expect(res.status).to.equal(200);
    expect(res.body).to.have.length(ENDPOINTS - EXCLUDED);
    const excluded = new Set(ids.slice(0, EXCLUDED));
    expect(res.body.some((s) => excluded.has(s.endpointId))).to.equal(false);
    const named = new Map(res.body.map((s) => [s.endpointId, s.endpointName]));
    expect(named.get(ids[500])).to.equal('host-500');
  });

  it('the unpaged organization list refuses more than 100,000 entries with a 400 naming the paged view', async () => {
    const res = await reader.get(`/org/${org}/software-inventory`);
    expectErrorBody(res, 400);
    expect((res.body as { message: string }).message).to.contain('search-page');
  });
});
