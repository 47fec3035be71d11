/** Puts one logical index's template on the cluster, laid out as the store context says. */
import type { StoreContext } from './client.js';
import { aliasName } from './client.js';
import { layoutSettings, type IndexTemplateFile } from './indices.js';

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
