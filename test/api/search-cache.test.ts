/**
 * Endpoint searches use Elasticsearch's shard request cache also for pages with hits (the
 * console's identical first pages). The cache is answered from only until a refresh
 * changes the shard, so the write-visibility guarantee holds: the same search, cached before a
 * write, sees the write as soon as the write has answered.
 */
import { expect } from 'chai';
import { useOrg, RUN_PREFIX, type EndpointRecord } from '../helpers/app.js';

interface Page {
  totalCount: number;
  items: { id: string }[];
}

describe('endpoint searches: shard request cache, and still searchable when the answer arrives', () => {
  const o = useOrg();

  const cacheHits = async (): Promise<number> => {
    const stats = await o.t.server.store.client.indices.stats({ index: `${RUN_PREFIX}-endpoints`, metric: 'request_cache' });
    return stats._all.total?.request_cache?.hit_count ?? 0;
  };
  const page = async (): Promise<Page> => {
    const res = await o.reader.post<Page>('/endpoint/page-search', { criteria: { orgId: o.org }, pageRequest: { page: 0, size: 50 } });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it('the same page search is answered from the cache, and sees a create and a delete made after it was cached', async () => {
    const first = await o.t.world.endpoint(o.org);
    const before = await page();
    expect(before.items.map((i) => i.id)).to.include(first.id);
    const hits = await cacheHits();
    expect(await page()).to.deep.equal(before);
    expect(await cacheHits()).to.be.above(hits);

    const created = await o.admin.post<EndpointRecord>('/endpoint', { orgId: o.org, displayName: 'cached-search' });
    expect(created.status, created.text).to.equal(200);
    const afterCreate = await page();
    expect(afterCreate.totalCount).to.equal(before.totalCount + 1);
    expect(afterCreate.items.map((i) => i.id)).to.include(created.body.id);

    const deleted = await o.admin.delete(`/endpoint/${created.body.id}`);
    expect(deleted.status, deleted.text).to.be.oneOf([200, 204]);
    const afterDelete = await page();
    expect(afterDelete.totalCount).to.equal(before.totalCount);
    expect(afterDelete.items.map((i) => i.id)).to.not.include(created.body.id);
  });
});
