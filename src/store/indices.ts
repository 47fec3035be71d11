/**
 * Index templates, aliases and start-up checks. Each file in `index-templates/` is one
 * composable template (`template.settings`, `template.mappings`, `_meta.version`); the
 * logical index `<name>` is written and read through the alias `<prefix>-<name>`, which
 * points at a versioned concrete index `<prefix>-<name>-000001` so a reindex can swap it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { estypes } from '@elastic/elasticsearch';
import type { IndexLayout, StoreContext } from './client.js';
import { aliasName } from './client.js';
import type { Logger } from '../log.js';
import { esErrorType } from './errors.js';
import { emptyCheck, logCheck, putTemplatesGuarded, upgradeMappings, type SchemaCheck } from './schema.js';

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
function replicaSettings(layout: IndexLayout | undefined): {
  auto_expand_replicas: string;
  number_of_replicas?: number;
} {
  return layout?.replicas === undefined
    ? { auto_expand_replicas: '0-1' }
    : { auto_expand_replicas: 'false', number_of_replicas: layout.replicas };
}

/** Primary shards the layout asks for one logical index; undefined: the template file's. */
function layoutShards(layout: IndexLayout | undefined, name: string): number | undefined {
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

/** Puts the template for one logical index (idempotent), with its schema version as the template's `version` and `_meta.version`. */
export async function putTemplate(ctx: StoreContext, t: IndexTemplateFile): Promise<void> {
  const alias = aliasName(ctx.prefix, t.name);
  await ctx.client.indices.putIndexTemplate({
    name: alias,
    index_patterns: [`${alias}-*`],
    priority: 100,
    version: t.version,
    template: {
      settings: { ...t.template.settings, ...layoutSettings(ctx.layout, t.name) },
      mappings: { ...t.template.mappings, _meta: { ...(t.template.mappings._meta ?? {}), version: t.version } },
    },
    _meta: { version: t.version },
  });
}

/**
 * Applies the templates (never over a newer version: src/store/schema.ts) and makes sure each
 * alias exists; brings older mappings to this instance's version in place where Elasticsearch
 * accepts it, and warns about those that need a new generation (the SchemaKeeper makes it, in
 * the background). Safe to run concurrently from several instances, of one release or two.
 */
export async function ensureIndices(ctx: StoreContext, log: Logger): Promise<SchemaCheck> {
  const templates = loadTemplates();
  const check = emptyCheck();
  await putTemplatesGuarded(ctx, templates, true, check);
  for (const t of templates) {
    const alias = aliasName(ctx.prefix, t.name);
    const exists = await ctx.client.indices.existsAlias({ name: alias });
    if (!exists) {
      try {
        await ctx.client.indices.create({
          index: concreteIndexName(ctx.prefix, t.name, 1),
          aliases: { [alias]: { is_write_index: true } },
        });
      } catch (err) {
        if (esErrorType(err) !== 'resource_already_exists_exception') throw err;
      }
      continue;
    }
    await applyLayout(ctx, t.name, log);
  }
  await upgradeMappings(ctx, templates, check, log);
  for (const index of check.mappingsInPlace) log.info({ index }, `index ${index}: mapping updated in place`);
  logCheck(log, check);
  return check;
}

/**
 * Brings the replicas of an existing index (the generation behind its alias) in line with the
 * layout: an operator who changes ECS_INDEX_REPLICAS expects it to take effect. Primary shards
 * cannot change in place; a difference is logged with the reindex that applies it.
 */
async function applyLayout(ctx: StoreContext, name: string, log: Logger): Promise<void> {
  const alias = aliasName(ctx.prefix, name);
  const want = replicaSettings(ctx.layout);
  const wantShards = layoutShards(ctx.layout, name);
  const res = await ctx.client.indices.getSettings({ index: alias, flat_settings: true });
  for (const [index, state] of Object.entries(res)) {
    const s = (state.settings ?? {}) as Record<string, unknown>;
    const expand = String(s['index.auto_expand_replicas'] ?? 'false');
    const replicas = Number(s['index.number_of_replicas'] ?? 1);
    const differs =
      want.number_of_replicas === undefined
        ? expand !== want.auto_expand_replicas
        : expand !== 'false' || replicas !== want.number_of_replicas;
    if (differs) {
      await ctx.client.indices.putSettings({ index, settings: { index: want } });
      log.info(
        { index, from: { auto_expand_replicas: expand, number_of_replicas: replicas }, to: want },
        `index ${index}: replicas updated`,
      );
    }
    const shards = Number(s['index.number_of_shards']);
    if (wantShards !== undefined && shards !== wantShards) {
      log.warn(
        { index, alias, shards, layoutShards: wantShards },
        `index ${index} has ${shards} primary shards, the layout asks ${wantShards}; run: npm run ops -- reindex ${name} --force`,
      );
    }
  }
}
