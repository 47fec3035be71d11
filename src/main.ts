/** `npm start`: the service on :8080, with a managed local Elasticsearch unless ELASTICSEARCH_URL is set. */
import { loadConfig } from './config.js';
import { bufferedStdout, createLogger } from './log.js';
import { startServer, type RunningServer } from './server.js';
import { assertKnownIndices, assertStartableConfig } from './start-checks.js';
import type { LocalNode } from './dev/local-elasticsearch.js';
import { boundHeapGrowth } from './runtime.js';
import { StoreAccessError } from './store/client.js';
import { consoleBanner } from './http/console.js';

boundHeapGrowth();

/** A refused setting stops the start with one line naming it (no stack trace). */
function configOrExit(): ReturnType<typeof loadConfig> {
  try {
    const config = loadConfig();
    assertKnownIndices(config);
    return config;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}

const config = configOrExit();
const stdout = bufferedStdout();
const log = createLogger(config.logLevel, stdout, config.logFormat);

let node: LocalNode | undefined;

/** A cause retrying cannot cure (a refused configuration, credentials, TLS trust): one clear line, then exit non-zero. */
async function fail(err: unknown): Promise<never> {
  if (err instanceof StoreAccessError) log.fatal(`cannot use Elasticsearch: ${err.message}`);
  else log.fatal(err instanceof Error ? err.message : String(err));
  if (node?.started) await node.stop();
  process.exit(1);
}

let server: RunningServer;
try {
  // Before the managed node starts: a refused configuration leaves nothing running.
  assertStartableConfig(config);
  let esUrl = config.elasticsearchUrl;
  if (!esUrl) {
    // The Maven/useradd launcher is development tooling: loaded only when no cluster is given.
    const { startLocalNode } = await import('./dev/local-elasticsearch.js');
    node = await startLocalNode({
      name: 'dev',
      port: Number(process.env.ECS_LOCAL_ES_PORT ?? 0),
      log: (line) => log.info(line),
    });
    esUrl = node.url;
  }
  server = await startServer({ config, log, elasticsearchUrl: esUrl });
  // Through the log's own stream, so it follows the start's lines still in its buffer.
  stdout.write(`${consoleBanner(server.port)}\n`);
  log.flush();
} catch (err) {
  await fail(err);
  throw err;
}
// A cluster that was unreachable at start may later refuse the service for good.
server.ready.catch(async (err: unknown) => {
  await server.close().catch(() => undefined);
  await fail(err);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => {
    log.error('shutdown took too long; exiting');
    process.exit(1);
  }, 30_000);
  force.unref();
  await server.close();
  if (node?.started) await node.stop();
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
