/**
 * Root hooks: before the run, start the node when an integration suite is in it (once, with
 * the time a cold start needs, so no suite's own hook timeout pays for it), and Keycloak beside
 * it when the single sign-on suite is in the run; after the whole run, drop the run's indices
 * and stop the node (and the Keycloak of the single sign-on tests) it started.
 */
import { closeSharedApp, RUN_PREFIX } from './helpers/app.js';
import { dropIndicesUnder, stopTestElasticsearch, testElasticsearch } from './helpers/elasticsearch.js';
import { stopTestKeycloak, testKeycloak } from './helpers/keycloak.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    const files = (this.test?.parent?.suites ?? []).map((s) => s.file ?? '');
    if (!files.some((f) => /test[\\/](api|ops|console)[\\/]/.test(f))) return;
    // Keycloak's minute of start-up overlaps the node's and the suites that run before single
    // sign-on's instead of adding to the run; a failed start fails that suite when it awaits it.
    if (files.some((f) => /test[\\/]console[\\/]sso\.test\.ts$/.test(f))) testKeycloak().catch(() => undefined);
    this.timeout(300_000);
    await testElasticsearch();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await closeSharedApp();
    if (process.env.ELASTICSEARCH_URL) await dropIndicesUnder(RUN_PREFIX);
    await stopTestElasticsearch();
    await stopTestKeycloak();
  },
};
