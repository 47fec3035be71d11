import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { assertKnownIndices } from '../../src/start-checks.js';
import { reindex } from '../../src/store/reindex.js';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';

/** Replicas and shards of the indices (ECS_INDEX_REPLICAS, ECS_INDEX_SHARDS, ECS_INDEX_SHARDS_BY_INDEX). */
describe('index layout: replicas and shards', function () {
  this.timeout(120_000);
  const prefix = `${RUN_PREFIX}-layout`;
  const alias = `${prefix}-endpoints`;
  let t: TestApp | undefined;

  /** The flat settings of every index behind the endpoints alias. */
  async function settings(app: TestApp): Promise<Record<string, Record<string, string>>> {
    const res = await app.server.store.client.indices.getSettings({ index: alias, flat_settings: true });
    return Object.fromEntries(Object.entries(res).map(([index, s]) => [index, s.settings as Record<string, string>]));
  }

  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('by default: auto-expanding replicas (0-1), one primary shard, writes wait for the primary only', async () => {
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix });
    const s = Object.values(await settings(t))[0];
    expect(s['index.auto_expand_replicas']).to.equal('0-1');
    expect(s['index.number_of_shards']).to.equal('1');
    expect(s['index.write.wait_for_active_shards']).to.equal('1');
    // One node: no replica, green.
    expect(s['index.number_of_replicas']).to.equal('0');
    expect((await t.anon.get('/health/ready')).status).to.equal(200);
  });

  it('an explicit ECS_INDEX_REPLICAS is applied to the existing indices at start-up; a shard change is reported, not forced', async () => {
    t = await startTestApp({
      ECS_INDEX_PREFIX: prefix,
      ECS_INDEX_REPLICAS: '1',
      ECS_INDEX_SHARDS_BY_INDEX: 'endpoints=2',
    });
    const s = Object.values(await settings(t))[0];
    expect(s['index.auto_expand_replicas']).to.equal('false');
    expect(s['index.number_of_replicas']).to.equal('1');
    expect(s['index.number_of_shards']).to.equal('1');
    expect(t.logs.some((l) => l.includes('primary shards, the layout asks 2'))).to.equal(true);
    // One node with a replica asked for: yellow, and still ready.
    expect((await t.anon.get('/health/ready')).status).to.equal(200);
  });

  it('a reindex creates the next generation with the same layout (through the one template)', async () => {
    t = await startTestApp({
      ECS_INDEX_PREFIX: prefix,
      ECS_INDEX_REPLICAS: '0',
      ECS_INDEX_SHARDS_BY_INDEX: 'endpoints=2',
    });
    const org = await t.world.org();
    const ep = await t.world.endpoint(org);
    const result = await reindex(t.server.store, 'endpoints', { force: true });
    expect(result.status).to.equal('reindexed');
    const all = await settings(t);
    expect(Object.keys(all)).to.deep.equal([result.to]);
    const s = all[result.to!];
    expect(s['index.number_of_shards']).to.equal('2');
    expect(s['index.number_of_replicas']).to.equal('0');
    expect(s['index.auto_expand_replicas']).to.equal('false');
    expect((await t.admin.get(`/endpoint/${ep.id}`)).status).to.equal(200);
  });

  it('configuration: unknown index names and bad counts are refused at start', () => {
    expect(() => assertKnownIndices(loadConfig({ ECS_INDEX_SHARDS_BY_INDEX: 'nope=2' }))).to.throw(/ECS_INDEX_SHARDS_BY_INDEX.*unknown index nope/);
    expect(() => loadConfig({ ECS_INDEX_SHARDS_BY_INDEX: 'endpoints=0' })).to.throw(/ECS_INDEX_SHARDS_BY_INDEX/);
    expect(() => loadConfig({ ECS_INDEX_REPLICAS: '-1' })).to.throw(/ECS_INDEX_REPLICAS/);
    expect(
      loadConfig({ ECS_INDEX_SHARDS: '3', ECS_INDEX_SHARDS_BY_INDEX: 'endpoints=6,software-inventory=4' }).indexLayout,
    ).to.deep.equal({
      replicas: undefined,
      shards: 3,
      shardsByIndex: { endpoints: 6, 'software-inventory': 4 },
    });
  });
});
