/**
 * Index templates and aliases, as data (set-up on the cluster: ./index-setup.ts). Each file in `index-templates/` is one
 * composable template (`template.settings`, `template.mappings`, `_meta.version`); the
 * logical index `<name>` is written and read through the alias `<prefix>-<name>`, which
 * points at a versioned concrete index `<prefix>-<name>-000001` so a reindex can swap it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { estypes } from '@elastic/elasticsearch';
import { aliasName, type IndexLayout } from './client.js';

const templatesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'index-templates');

export interface IndexTemplateFile {
  name: string;
  version: number;
  template: { settings?: estypes.IndicesIndexSettings; mappings: estypes.MappingTypeMapping };
}

/** Every template in `index-templates/`, by logical index name. */
export function loadTemplates(): IndexTemplateFile[] {
  return fs
    .readdirSync(templatesDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const raw = JSON.parse(fs.readFileSync(path.join(templatesDir, f), 'utf8')) as {
        _meta?: { version?: number };
        template: IndexTemplateFile['template'];
      };
      const version = raw._meta?.version;
      if (typeof version !== 'number') throw new Error(`${f}: _meta.version must be a number`);
      return { name: f.replace(/\.json$/, ''), version, template: raw.template };
    });
}

let logicalNames: string[] | undefined;

/** The aliases of the service's own logical indices under `prefix` (what readiness checks). */
export function serviceAliases(prefix: string): string[] {
  logicalNames ??= loadTemplates().map((t) => t.name);
  return logicalNames.map((name) => aliasName(prefix, name));
}

export function concreteIndexName(prefix: string, logical: string, generation: number): string {
  return `${aliasName(prefix, logical)}-${String(generation).padStart(6, '0')}`;
}

/** Replica settings of the layout: an explicit count turns auto-expand off. */
export function replicaSettings(layout: IndexLayout | undefined): {
  auto_expand_replicas: string;
  number_of_replicas?: number;
} {
  return layout?.replicas === undefined
    ? { auto_expand_replicas: '0-1' }
    : { auto_expand_replicas: 'false', number_of_replicas: layout.replicas };
}

/** Primary shards the layout asks for one logical index; undefined: the template file's. */
export function layoutShards(layout: IndexLayout | undefined, name: string): number | undefined {
  return layout?.shardsByIndex[name] ?? layout?.shards;
}

/**
 * The settings the layout gives one logical index, on top of its template file: primary shards,
 * replicas, and the write pre-check. Writes wait for the primary only (`1`, Elasticsearch's own
 * default, written out because it is a choice, see docs/adr/0012-cluster-ready-index-layout.md): every acknowledged write
 * is already on all in-sync copies, and a stricter pre-check would refuse writes while a replica
 * is unassigned, that is during the node loss it is meant to survive.
 */
export function layoutSettings(layout: IndexLayout | undefined, name: string): estypes.IndicesIndexSettings {
  const shards = layoutShards(layout, name);
  return {
    ...(shards ? { number_of_shards: shards } : {}),
    ...replicaSettings(layout),
    'write.wait_for_active_shards': '1',
  };
}
