/** `npm run openapi [-- file]`: writes the generated OpenAPI document (default docs/openapi.json). */
import fs from 'node:fs';
import { createApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { createClient } from '../store/client.js';

const out = process.argv[2] ?? 'docs/openapi.json';
const config = loadConfig();
const client = createClient('http://127.0.0.1:9', 1000);
const handle = createApp({ config, store: { client, prefix: config.indexPrefix, refresh: 'none' }, log: createLogger('silent') });
fs.writeFileSync(out, JSON.stringify(handle.openapi, null, 2) + '\n');
await client.close();
console.log(`wrote ${out}: ${handle.routes.length} operations`);
