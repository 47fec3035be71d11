import { expect } from 'chai';
import { RUN_PREFIX, useTenants } from '../helpers/app.js';
import { clockPast } from '../helpers/wait.js';
import { aliasName } from '../../src/store/client.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createServices, type Services } from '../../src/container.js';
import { Access } from '../../src/access/access.js';
import { SoftwareInventoryService } from '../../src/resources/software-inventory/service.js';
import { SoftwareInventoryStore } from '../../src/resources/software-inventory/store.js';
import { InventoryDigests } from '../../src/resources/software-inventory/digests.js';

interface Software {
  name: string;
  version: string;
  vendor?: string;
  firstSeen: string;
  lastSeen: string;
}

/**
 * An unchanged report is answered from the endpoint's digest, without a search of its entries
 * (docs/adr/0151-an-unchanged-inventory-report-read-by-its-digest.md); whatever else writes the
 * entries withdraws the digest, so the next report reads and corrects them.
 */
describe('software inventory: an unchanged report read by its digest', () => {
  const w = useTenants();
  const inv = (id: string): string => `/endpoint/${id}/software-inventory`;
  const report = [
    { name: 'Firefox', version: '120.0', vendor: 'Mozilla' },
    { name: 'Zoom', version: '5.17', architecture: 'x64' },
    { name: '7-Zip', version: '23.01', installDate: '2025-03-01' },
  ];
  const pairs = (list: { name: string; version: string }[]): string[] => list.map((s) => `${s.name}@${s.version}`).sort();

  /** Searches the inventory index has run so far (its shards' query phases). */
  async function inventorySearches(): Promise<number> {
    const index = aliasName(RUN_PREFIX, 'software-inventory');
    const stats = await w.t.server.store.client.indices.stats({ index, metric: 'search' });
    return stats._all.total?.search?.query_total ?? 0;
  }

  async function stored(id: string): Promise<Software[]> {
    const res = await w.adminA.get<Software[]>(inv(id));
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  it('a repeated report, in any order, answers 201 without searching the entries and leaves them as they were', async () => {
    const ep = (await w.t.world.endpoint(w.orgA)).id;
    expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
    const first = await stored(ep);
    const before = await inventorySearches();
    for (const again of [report, [...report].reverse(), [report[1], report[0], report[2], report[0]]]) {
      const res = await w.adminA.post(inv(ep), again);
      expect(res.status, res.text).to.equal(201);
    }
    expect(await inventorySearches(), 'searches of the inventory during three unchanged reports').to.equal(before);
    expect(await stored(ep)).to.deep.equal(first);
  });

  it('a report differing in one field only is written', async () => {
    const ep = (await w.t.world.endpoint(w.orgA)).id;
    expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
    const changed = [{ ...report[0], vendor: 'Mozilla Foundation' }, report[1], report[2]];
    expect((await w.adminA.post(inv(ep), changed)).status).to.equal(201);
    expect((await stored(ep)).find((s) => s.name === 'Firefox')?.vendor).to.equal('Mozilla Foundation');
  });

  it('after an entry is added, removed or moved on its own, the same report again restores exactly its entries', async () => {
    const ep = (await w.t.world.endpoint(w.orgA)).id;
    const changes: [string, () => Promise<{ status: number; text: string }>][] = [
      ['add', () => w.adminA.post(`${inv(ep)}/Slack`, { version: '4.36' })],
      ['remove', () => w.adminA.delete(`${inv(ep)}/Zoom`, { body: { version: '5.17' } })],
      ['move', () => w.adminA.put(`${inv(ep)}/Firefox`, { version: '121.0', previousVersion: '120.0' })],
    ];
    expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
    for (const [what, change] of changes) {
      const res = await change();
      expect(res.status, `${what}: ${res.text}`).to.be.oneOf([200, 201, 204]);
      expect(pairs(await stored(ep)), `${what} took effect`).to.not.deep.equal(pairs(report));
      expect((await w.adminA.post(inv(ep), report)).status).to.equal(201);
      expect(pairs(await stored(ep)), `the report after the ${what}`).to.deep.equal(pairs(report));
    }
  });

  describe('the lastSeen window', () => {
    let s: Services;
    let svc: SoftwareInventoryService;
    let system: Access;
    const WINDOW_MS = 1_000;

    before(async () => {
      const store = { client: w.t.server.store.client, prefix: RUN_PREFIX, refresh: 'shared' as const };
      s = createServices({ config: loadConfig({ ...process.env, ECS_INDEX_PREFIX: RUN_PREFIX }), store, log: createLogger('warn') });
      svc = new SoftwareInventoryService(new SoftwareInventoryStore(store), new InventoryDigests(store), s.endpoints, s.orgs, { lastSeenRefreshMs: WINDOW_MS });
      system = new Access({ role: 'system', name: 'digest-window-test' }, s.orgs);
    });

    it('an unchanged report once the window has passed rewrites lastSeen, and within it does not', async () => {
      const ep = (await w.t.world.endpoint(w.orgA)).id;
      const first = await svc.replaceForEndpoint(ep, report, system);
      expect(first.created).to.equal(3);
      const within = await svc.replaceForEndpoint(ep, report, system);
      expect(within).to.deep.equal({ created: 0, updated: 0, deleted: 0, unchanged: 3 });
      const seen = await stored(ep);
      await clockPast(seen.map((e) => new Date(Date.parse(e.lastSeen) + WINDOW_MS).toISOString()));
      const after = await svc.replaceForEndpoint(ep, report, system);
      expect(after).to.deep.equal({ created: 0, updated: 3, deleted: 0, unchanged: 0 });
      const refreshed = await stored(ep);
      for (const e of refreshed) {
        const old = seen.find((o) => o.name === e.name);
        expect(Date.parse(e.lastSeen), e.name).to.be.greaterThan(Date.parse(old?.lastSeen ?? ''));
        expect(e.firstSeen, e.name).to.equal(old?.firstSeen);
      }
    });
  });
});
