/** Start-up set-up of the indices: templates, aliases, layout and in-place mapping upgrades. */
import type { StoreContext } from './client.js';
import { aliasName } from './client.js';
import type { Logger } from '../log.js';
import { esErrorType } from './errors.js';
import { concreteIndexName, layoutShards, loadTemplates, replicaSettings } from './indices.js';
import { emptyCheck, logCheck, putTemplatesGuarded, upgradeMappings, type SchemaCheck } from './schema.js';

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
