import { expect } from 'chai';
import { RUN_PREFIX, expectErrorBody, startTestApp, type TestApp } from '../helpers/app.js';

describe('index set-up guards', () => {
  const prefix = `${RUN_PREFIX}-setup`;
  const alias = `${prefix}-client-versions`;
  let t: TestApp;
  const versions = { linux: '3.11.0', mac: '3.11.0', windows: '3.11.0' };

  before(async () => {
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix });
  });
  after(() => t.close());

  it('until the indices are set up every operation answers 503 with Retry-After; health says why', async () => {
    t.server.handle.setIndicesReady(false);
    try {
      const res = await t.admin.get('/client-version/default');
      expectErrorBody(res, 503);
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      const ready = await fetch(`${t.url}/health/ready`);
      expect(ready.status).to.equal(503);
      expect(((await ready.json()) as { indices: string }).indices).to.equal('PENDING');
      expect((await fetch(`${t.url}/health/live`)).status).to.equal(200);
    } finally {
      t.server.handle.setIndicesReady(true);
    }
    expect((await t.admin.get('/client-version/default')).status).to.equal(200);
  });

  it('a write whose index is gone answers 503 and never creates an index under the alias name', async () => {
    const es = t.server.store.client;
    expect((await t.admin.put('/client-version/default', versions)).status).to.equal(200);
    await es.indices.delete({ index: `${alias}-000001` });
    expectErrorBody(await t.admin.put('/client-version/default', versions), 503);
    expect(await es.indices.exists({ index: alias })).to.equal(false);
  });
});
