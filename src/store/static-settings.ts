/**
 * Index settings a template can change that Elasticsearch fixes when it creates an index: the
 * index sort (docs/adr/0132-pages-count-apart-and-endpoints-sorted-by-id.md). An index built
 * before such a change keeps its old value whatever its mapping's version says, so a change
 * of one takes the index to a new generation, as a mapping change Elasticsearch refuses does.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { StoreContext } from './client.js';

const STATIC = ['sort.field', 'sort.order', 'sort.missing', 'sort.mode'] as const;

/** `settings` flattened to dotted keys without the `index.` prefix, each value as Elasticsearch lists it. */
function flat(settings: unknown, at = '', out: Map<string, string> = new Map()): Map<string, string> {
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
    out.set(at.replace(/^index\./, ''), ([] as unknown[]).concat(settings).map(String).join(','));
    return out;
  }
  for (const [k, v] of Object.entries(settings)) flat(v, at ? `${at}.${k}` : k, out);
  return out;
}

/** The static settings (without `index.`) whose value in `index` differs from the template's; empty when none. */
export async function staticSettingsChanged(ctx: StoreContext, index: string, want: estypes.IndicesIndexSettings | undefined): Promise<string[]> {
  const res = await ctx.client.indices.getSettings({ index, flat_settings: true });
  const have = flat(res[index]?.settings ?? {});
  const wanted = flat(want ?? {});
  return STATIC.filter((k) => (wanted.get(k) ?? '') !== (have.get(k) ?? ''));
}
