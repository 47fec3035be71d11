/**
 * The container's services built against a store that never answers (nothing listens at the
 * address): for unit tests that need the services' declarations or task list, not their data.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createServices } from '../../src/container.js';
import { createClient } from '../../src/store/client.js';

export type OfflineServices = ReturnType<typeof createServices>;

/** The services, and the store client to close after the tests. */
export function offlineServices(): { services: OfflineServices; close: () => Promise<void> } {
  const client = createClient('http://127.0.0.1:9', 1000);
  const config = loadConfig({ ...process.env, ELASTICSEARCH_URL: 'http://127.0.0.1:9', ECS_DEVELOPMENT: 'true', DATABASE_URL: 'pglite:memory' });
  const services = createServices({ config, store: { client, prefix: 'unit', refresh: 'none' }, log: createLogger('silent') });
  return { services, close: () => client.close() };
}
