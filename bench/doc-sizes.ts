/**
 * `node --import tsx bench/doc-sizes.ts`: bytes per document of each index, for docs/scaling.md.
 * Seeds the benchmark's `--quick` data set (bench/seed.ts) plus 20 heartbeats per sensor under
 * the prefix `ecs-docsize` on ELASTICSEARCH_URL, force-merges to one segment, prints
 * index, documents, primary bytes and bytes per document, and drops the indices again.
 */
import { Client } from '@elastic/elasticsearch';
import { loadConfig } from '../src/config.js';
import { Access } from '../src/access/access.js';
import { createLogger } from '../src/log.js';
import { createServices } from '../src/container.js';
import type { StoreContext } from '../src/store/client.js';
import { ensureIndices } from '../src/store/index-setup.js';
import { QUICK, seed } from './seed.js';

const PREFIX = 'ecs-docsize';
const HEARTBEAT_ROUNDS = 20;

const url = process.env.ELASTICSEARCH_URL;
if (!url) throw new Error('set ELASTICSEARCH_URL');
const client = new Client({ node: url, requestTimeout: 300_000 });
const config = loadConfig({ ELASTICSEARCH_URL: url, ECS_INDEX_PREFIX: PREFIX, ECS_DEVELOPMENT: 'true' });
const ctx: StoreContext = { client, prefix: PREFIX, refresh: 'none' };
const log = createLogger('warn');
const services = createServices({ config, store: ctx, log });
const SYSTEM = new Access(
  { role: 'system', name: 'doc-sizes' },
  { exists: async () => true, isWithin: async () => true, subtreeQuery: async (o, f) => ({ term: { [f.replace(/orgId$/, 'orgPath')]: o } }) },
);

async function drop(): Promise<void> {
  await client.indices.delete({
    index: `${PREFIX}-*`,
    expand_wildcards: 'all',
    allow_no_indices: true,
    ignore_unavailable: true,
  });
  await client.indices.deleteIndexTemplate({ name: `${PREFIX}-*` }).catch(() => undefined);
}

try {
  await drop();
  await ensureIndices(ctx, log);
  const seeded = await seed(services, services.storeContext, QUICK, (l) => console.error(l));
  for (let round = 0; round < HEARTBEAT_ROUNDS; round++) {
    for (let s = 0; s < seeded.sensors.length; s += 8) {
      await Promise.all(
        seeded.sensors
          .slice(s, s + 8)
          .map((sn) =>
            services.network.recordHeartbeat(
              { ...sn, externalAddress: '198.51.100.7', operatingSystem: 'linux' },
              SYSTEM,
            ),
          ),
      );
    }
  }
  await client.indices.refresh({ index: `${PREFIX}-*` });
  await client.indices.forcemerge({ index: `${PREFIX}-*`, max_num_segments: 1 });
  const stats = await client.indices.stats({ index: `${PREFIX}-*`, metric: ['docs', 'store'] });
  console.log('index\tdocuments\tprimary bytes\tbytes per document');
  for (const [name, s] of Object.entries(stats.indices ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const docs = s.primaries?.docs?.count ?? 0;
    const bytes = s.primaries?.store?.size_in_bytes ?? 0;
    if (docs > 0) console.log(`${name}\t${docs}\t${bytes}\t${Math.round(bytes / docs)}`);
  }
} finally {
  await drop();
  await client.close();
  await services.deviceMigration.close();
}
