/** The service's version, from its package.json (the OpenAPI document's and the traces' resource). */
import fs from 'node:fs';

export const SERVICE_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The API contract's semantic version (info.version of the OpenAPI document; CHANGELOG.md, docs/adr/0082-versioned-contract.md). */
export const API_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { config: { apiVersion: string } }
).config.apiVersion;
