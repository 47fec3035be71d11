/**
 * The Elasticsearch a test run talks to: ELASTICSEARCH_URL when set, else testcontainers'
 * Elasticsearch module when a Docker engine answers, else the managed local node. It never
 * skips: when no node can be had, the run fails and says why.
 */
import fs from 'node:fs';
import { Client } from '@elastic/elasticsearch';
import { pinnedVersion, startLocalNode } from '../../src/dev/local-elasticsearch.js';

interface Running {
  url: string;
  stop(): Promise<void>;
}

let running: Promise<Running> | undefined;

async function dockerAnswers(): Promise<boolean> {
  if (!fs.existsSync('/var/run/docker.sock') && !process.env.DOCKER_HOST) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function start(): Promise<Running> {
  if (process.env.ELASTICSEARCH_URL) return { url: process.env.ELASTICSEARCH_URL, stop: async () => {} };
  if (await dockerAnswers()) {
    const { ElasticsearchContainer } = await import('@testcontainers/elasticsearch');
    const c = await new ElasticsearchContainer(`docker.elastic.co/elasticsearch/elasticsearch:${pinnedVersion()}`)
      .withEnvironment({ 'xpack.security.enabled': 'false' })
      .start();
    return { url: c.getHttpUrl(), stop: async () => void (await c.stop()) };
  }
  const node = await startLocalNode({
    name: 'test',
    port: 0,
    log: (l) => process.stderr.write(`  [elasticsearch] ${l}\n`),
  });
  await allowRunShards(node.url);
  return { url: node.url, stop: () => node.stop() };
}

/**
 * A whole run keeps every test app's indices on one node (each app has its own prefix, about 30
 * indices), more than the default 1,000 shards a node takes: the run's own node takes more.
 */
async function allowRunShards(url: string): Promise<void> {
  const client = new Client({ node: url });
  try {
    await client.cluster.putSettings({ persistent: { 'cluster.max_shards_per_node': 10_000 } });
  } finally {
    await client.close();
  }
}

/** The run's node, started on first use. */
export function testElasticsearch(): Promise<Running> {
  running ??= start();
  return running;
}

/** Stops the node if this run started one. */
export async function stopTestElasticsearch(): Promise<void> {
  if (!running) return;
  const r = await running.catch(() => undefined);
  running = undefined;
  await r?.stop();
}

/** Deletes the indices and index templates under `prefix` (what a run or a fuzz campaign created). */
export async function dropIndicesUnder(prefix: string): Promise<void> {
  const es = await testElasticsearch();
  const client = new Client({ node: es.url });
  const indices = await client.indices.get({ index: `${prefix}-*`, allow_no_indices: true, ignore_unavailable: true }).catch(() => ({}));
  for (const name of Object.keys(indices)) await client.indices.delete({ index: name }).catch(() => undefined);
  const templates = await client.indices.getIndexTemplate({ name: `${prefix}-*` }).catch(() => ({ index_templates: [] }));
  for (const t of templates.index_templates) await client.indices.deleteIndexTemplate({ name: t.name }).catch(() => undefined);
  await client.close();
}
