import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';

interface Ready {
  status: string;
  elasticsearch: string;
  indices: string;
}

describe('readiness checks exactly the service indices (GET /health/ready)', function () {
  this.timeout(120_000);
  const prefix = `${RUN_PREFIX}-ready`;
  const foreign = `${prefix}-other-x`;
  const own = `${prefix}-vendor-data`;
  let t: TestApp;

  const ready = async (): Promise<{ status: number; body: Ready }> => {
    const res = await fetch(`${t.url}/health/ready`);
    return { status: res.status, body: (await res.json()) as Ready };
  };
  /** An index whose only shard cannot be allocated (no node is named so): red for as long as it exists. */
  const createRed = (index: string, aliases: Record<string, object> = {}) =>
    t.server.store.client.indices.create({
      index,
      settings: {
        number_of_shards: 1,
        number_of_replicas: 0,
        'index.routing.allocation.require._name': 'no-such-node',
      },
      aliases,
      wait_for_active_shards: 0,
    });

  before(async () => {
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix });
  });
  after(async () => {
    await t.server.store.client.indices
      .delete({ index: `${foreign},${own}-*`, ignore_unavailable: true })
      .catch(() => undefined);
    await t.close();
  });

  it('a red index of another deployment matching `<prefix>-*` leaves the service ready', async () => {
    await createRed(foreign);
    const health = await t.server.store.client.cluster.health({
      index: `${prefix}-*`,
      expand_wildcards: 'all',
      timeout: '1s',
    });
    expect(health.status, 'the wildcard the service used to check is red').to.equal('red');
    const res = await ready();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'UP', elasticsearch: 'UP', indices: 'READY' });
  });

  it("the service's own index missing, then red, makes it unready (503 with Retry-After)", async () => {
    const es = t.server.store.client;
    await es.indices.delete({ index: `${own}-000001` });
    const missing = await fetch(`${t.url}/health/ready`);
    expect(missing.status).to.equal(503);
    expect(missing.headers.get('retry-after')).to.match(/^\d+$/);
    expect(((await missing.json()) as Ready).elasticsearch).to.equal('DOWN');

    await createRed(`${own}-000001`, { [own]: { is_write_index: true } });
    const red = await ready();
    expect(red.status).to.equal(503);
    expect(red.body.elasticsearch).to.equal('DOWN');

    // Allocatable again: ready again (the alias is back, its shard assigned).
    await es.indices.putSettings({
      index: `${own}-000001`,
      settings: { 'index.routing.allocation.require._name': null },
    });
    await es.cluster.health({ index: own, wait_for_status: 'green', timeout: '30s' });
    expect((await ready()).status).to.equal(200);
  });
});
