/** The service's version, from its package.json (the OpenAPI document's and the traces' resource). */
import fs from 'node:fs';

export const SERVICE_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
