/**
 * The bare hop: each scenario's direct equivalent (bench/scenarios.ts) behind a plain
 * node:http server, with the same Elasticsearch client settings as the service. No framework,
 * no authentication, no validation, no access log, no mapping: a request `POST /<k>/<i>` runs
 * request i of scenario k and answers the Elasticsearch response as JSON. It carries the body
 * the service's request i carries, which the hop parses and hands to the scenario.
 *
 * It measures what any Node HTTP service in front of Elasticsearch costs on this machine (an
 * HTTP request parsed and answered, a response serialized, on the same two cores), so a
 * scenario's gap splits into the hop's share (the architecture) and the service's own share
 * (service ÷ hop). Started by bench/run.ts with the data set's parameters in the environment.
 */
import http from 'node:http';
import { createClient } from '../src/store/client.js';
import { loadConfig } from '../src/config.js';
import { seededIds, sizeNamed } from './seed.js';
import { scenarios } from './scenarios.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`hop-server: ${name} is not set`);
  return v;
};

const client = createClient(env('ELASTICSEARCH_URL'), 30_000, loadConfig().elasticsearchSecurity);
const list = scenarios({
  client,
  prefix: env('BENCH_PREFIX'),
  seeded: seededIds(sizeNamed(env('BENCH_SIZE'))),
  root: env('BENCH_ROOT'),
  subtree: JSON.parse(env('BENCH_SUBTREE')) as string[],
  distributor: env('BENCH_DISTRIBUTOR'),
});

const server = http.createServer((req, res) => {
  const [, k, i] = (req.url ?? '').split('/');
  const sc = list[Number(k)];
  // The body the service's request carries, received and parsed as any JSON service must.
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (!sc) {
      res.writeHead(404).end();
      return;
    }
    const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    sc.direct(Number(i), body).then(
      (out) => {
        const answer = JSON.stringify(out ?? {});
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
      },
      (err: unknown) => {
        const answer = JSON.stringify({ message: String((err as Error)?.message ?? err) });
        res.writeHead(500, { 'content-type': 'application/json' }).end(answer);
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ msg: 'hop listening', url: `http://127.0.0.1:${addr.port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void client.close().then(() => process.exit(0));
});
