import { expect } from 'chai';
import { RUN_PREFIX, useTenants } from '../helpers/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createServices, type Services } from '../../src/container.js';
import { Access } from '../../src/access/access.js';

/**
 * A full report answers only once its writes are searchable, through the store's refresh shared
 * with concurrent writers (src/store/visibility.ts), the policy production runs with.
 */
describe('software inventory: a report is searchable when it answers', () => {
  let s: Services;
  let system: Access;

  const w = useTenants();
  before(async () => {
    s = createServices({
      config: loadConfig({ ...process.env, ECS_INDEX_PREFIX: RUN_PREFIX }),
      store: { client: w.t.server.store.client, prefix: RUN_PREFIX, refresh: 'shared' },
      log: createLogger('warn'),
    });
    system = new Access({ role: 'system', name: 'refresh-test' }, s.orgs);
  });

  const report = (prefix: string, n: number): { name: string; version: string }[] =>
    Array.from({ length: n }, (_, k) => ({ name: `${prefix}-${k}`, version: '1.0' }));
  const listed = async (id: string): Promise<string[]> =>
    (await s.softwareInventory.listForEndpoint(id, system)).map((e) => `${e.name}@${e.version}`).sort();

  it('back-to-back reports of one endpoint each end with exactly the reported entries', async () => {
    const e = await w.t.world.endpoint(w.orgA);
    for (const [prefix, n] of [
      ['a', 30],
      ['b', 10],
      ['a', 5],
    ] as const) {
      await s.softwareInventory.replaceForEndpoint(e.id, report(prefix, n), system);
      // Read through search at once: the previous report's entries are gone, this one's are there.
      expect(await listed(e.id)).to.deep.equal(report(prefix, n).map((i) => `${i.name}@${i.version}`).sort());
    }
  });

  it('concurrent reports of many endpoints are all searchable when they answer', async () => {
    const endpoints = await Promise.all(Array.from({ length: 8 }, () => w.t.world.endpoint(w.orgA)));
    await Promise.all(endpoints.map((e, k) => s.softwareInventory.replaceForEndpoint(e.id, report(`c${k}`, 20), system)));
    for (const [k, e] of endpoints.entries()) {
      expect(await listed(e.id)).to.have.length(20);
      expect((await listed(e.id))[0]).to.match(new RegExp(`^c${k}-`));
    }
  });
});
