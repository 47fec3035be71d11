/**
 * Test and bench access to the endpoints index below the service: a store of the app's own
 * context (its client and index prefix), and raw bulk loads that production never makes.
 */
import type { estypes } from '@elastic/elasticsearch';
import { EndpointStore } from '../../src/resources/endpoints/store.js';
import { aliasName, type StoreContext } from '../../src/store/client.js';
import { storeCall } from '../../src/store/errors.js';

/** An EndpointStore over the app's store context (same index, same client). */
export function endpointStore(ctx: StoreContext): EndpointStore {
  return new EndpointStore(ctx);
}

/** Raw bulk into the endpoints index (seeding), searchable when it returns unless `refresh: false`. */
export async function bulkEndpoints(
  ctx: StoreContext,
  operations: estypes.BulkRequest['operations'],
  opts: { refresh?: false } = {},
): Promise<estypes.BulkResponse> {
  const index = aliasName(ctx.prefix, 'endpoints');
  const res = await storeCall(() => ctx.client.bulk({ index, require_alias: true, operations }));
  if (opts.refresh !== false) await refreshIndex(ctx, 'endpoints');
  return res;
}

/** Refreshes one of the service's indices (after a bulk load). */
export async function refreshIndex(ctx: StoreContext, logicalIndex: string): Promise<void> {
  await storeCall(() => ctx.client.indices.refresh({ index: aliasName(ctx.prefix, logicalIndex) }));
}
