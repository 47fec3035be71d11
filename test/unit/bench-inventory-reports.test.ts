/**
 * The bench's inventory reports do what their names say, round after round: the unchanged report
 * writes nothing, and each changing report differs from the last one its endpoint was sent, by
 * about the writes its scenario names. Checked with the service's own diff, over requests
 * numbered as the bench numbers them (from 0 in every round, the service's and the hop's).
 */
import { expect } from 'chai';
import { Client } from '@elastic/elasticsearch';
import { inventoryScenarios } from '../../bench/inventory-scenarios.js';
import { QUICK, seededIds, seededInventory } from '../../bench/seed.js';
import { dedupe, diffUnique, type InstalledSoftware, type SoftwareInventoryDoc } from '../../src/resources/software-inventory/model.js';

const NOW = new Date('2026-11-29T12:00:00.000Z');

/** What the service stores for a report, as the next report's diff reads it. */
function stored(id: string, items: InstalledSoftware[]): SoftwareInventoryDoc[] {
  return diffUnique({ id, orgId: 'o' }, dedupe(items), [], NOW).upserts;
}

describe('bench: the inventory reports', () => {
  const seeded = seededIds(QUICK);
  // Building a request touches no store: the client is never called.
  const client = new Client({ node: 'http://127.0.0.1:9' });
  after(() => client.close());
  const list = inventoryScenarios({ client, prefix: 'ecs-unit', seeded, root: seeded.roots[0], subtree: [], distributor: seeded.roots[0] });
  const byName = (prefix: string) => {
    const sc = list.find((s) => s.name.startsWith(prefix));
    if (!sc) throw new Error(`no scenario ${prefix}`);
    return sc;
  };

  /** The writes of each request of three rounds of `rounds` requests each, against what the endpoint stored last. */
  function writesOver(prefix: string, rounds: number): { endpoint: string; index: number; deletes: number }[] {
    const sc = byName(prefix);
    const last = new Map<string, SoftwareInventoryDoc[]>();
    seeded.inventoryIds.forEach((id, n) => last.set(id, stored(id, seededInventory(n, 200))));
    const out: { endpoint: string; index: number; deletes: number }[] = [];
    for (let round = 0; round < 3; round++) {
      let i = 0;
      const request = sc.service(() => i++);
      const setup = request.setupRequest as (r: object) => { path: string; body: string };
      for (let k = 0; k < rounds; k++) {
        const built = setup({});
        const id = built.path.split('/')[4];
        const items = JSON.parse(built.body) as InstalledSoftware[];
        const diff = diffUnique({ id, orgId: 'o' }, dedupe(items), last.get(id) ?? [], NOW);
        out.push({ endpoint: id, index: diff.upserts.length, deletes: diff.deletes.length });
        last.set(id, stored(id, items));
      }
    }
    return out;
  }

  it('the unchanged report writes nothing, on any pass over the endpoints', () => {
    const writes = writesOver('software inventory replace (200 items, unchanged)', seeded.inventoryIds.length * 2);
    expect(writes.filter((w) => w.index + w.deletes > 0)).to.deep.equal([]);
  });

  it('each typical report moves 10 entries: 10 to 20 index and as many deletes, on every pass and in every round', () => {
    const writes = writesOver('software inventory replace (200 items, 10', seeded.inventoryIds.length * 2 + 17);
    for (const w of writes) {
      expect(w.index, w.endpoint).to.be.within(10, 20);
      expect(w.deletes, w.endpoint).to.equal(w.index);
    }
    // After an endpoint's first report, the previous window returns and the new one moves.
    expect(writes.slice(seeded.inventoryIds.length).every((w) => w.index === 20)).to.equal(true);
  });

  it('each worst-case report replaces all 200 entries', () => {
    const writes = writesOver('software inventory replace (200 items, all', seeded.inventoryIds.length + 5);
    for (const w of writes) expect([w.index, w.deletes], w.endpoint).to.deep.equal([200, 200]);
  });
});
