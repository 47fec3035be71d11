/**
 * Root hooks: before the run, start the node when an integration suite is in it (once, with
 * the time a cold start needs, so no suite's own hook timeout pays for it); after the whole
 * run, drop the run's indices and stop the node it started.
 */
import { Client } from '@elastic/elasticsearch';
import { closeSharedApp, RUN_PREFIX } from './helpers/app.js';
import { stopTestElasticsearch, testElasticsearch } from './helpers/elasticsearch.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    const files = (this.test?.parent?.suites ?? []).map((s) => s.file ?? '');
    if (!files.some((f) => /test[\\/](api|ops)[\\/]/.test(f))) return;
    this.timeout(300_000);
    await testElasticsearch();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await closeSharedApp();
    if (process.env.ELASTICSEARCH_URL) {
      const es = await testElasticsearch();
      const client = new Client({ node: es.url });
      const indices = await client.indices.get({ index: `${RUN_PREFIX}-*`, allow_no_indices: true, ignore_unavailable: true }).catch(() => ({}));
      for (const name of Object.keys(indices)) await client.indices.delete({ index: name }).catch(() => undefined);
      const templates = await client.indices.getIndexTemplate({ name: `${RUN_PREFIX}-*` }).catch(() => ({ index_templates: [] }));
      for (const t of templates.index_templates) await client.indices.deleteIndexTemplate({ name: t.name }).catch(() => undefined);
      await client.close();
    }
    await stopTestElasticsearch();
  },
};
