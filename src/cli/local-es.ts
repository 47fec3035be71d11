/** `npm run es -- start|stop [name] [port]`: manage a local Elasticsearch node by hand. */
import { startLocalNode, stopLocalNode } from '../dev/local-elasticsearch.js';

const [cmd = 'start', name = 'dev', port = '9200'] = process.argv.slice(2);
const log = (l: string): void => console.error(`[local-es] ${l}`);

if (cmd === 'start') {
  const node = await startLocalNode({ name, port: Number(port), log });
  console.log(node.url);
} else if (cmd === 'stop') {
  const stopped = await stopLocalNode(name);
  log(stopped ? `stopped ${name}` : `${name} was not running`);
} else {
  console.error('usage: npm run es -- start|stop [name] [port]');
  process.exit(2);
}
