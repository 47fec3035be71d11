/**
 * Test and bench access to the endpoints index below the service: a store of the app's own
 * context (its client and index prefix), and raw bulk loads that production never makes.
 */
import type { estypes } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { EndpointStore } from '../../src/resources/endpoints/store.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';
import { aliasName, type StoreContext } from '../../src/store/client.js';
import { storeCall } from '../../src/store/errors.js';
import { DocStore } from '../../src/store/doc-store.js';

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
  // Through the store layer's bulk, so the records carry their organization's ancestry as the service's writes do.
  const res = await new DocStore<EndpointDoc>(ctx, 'endpoints', 'endpoint').bulk(operations, { refresh: false });
  if (opts.refresh !== false) await refreshIndex(ctx, 'endpoints');
  return res;
}

/** An agent document as the API would store it (for volume set-ups written straight into the index). */
export function agentDoc(id: string, orgId: string, fields: Partial<EndpointDoc> = {}): EndpointDoc {
  const now = new Date().toISOString();
  const who = { username: 'seed', authenticator: 'none' };
  return { id, orgId, type: 'VC_ENDPOINT', connectionStatus: 'CONNECTED', createdAt: now, updatedAt: now, createdBy: who, updatedBy: who, ...fields };
}

/** Creates the documents in one bulk, searchable when it returns; fails the test if any is refused. */
export async function createEndpointDocs(ctx: StoreContext, docs: EndpointDoc[]): Promise<void> {
  const res = await bulkEndpoints(
    ctx,
    docs.flatMap((d) => [{ create: { _id: d.id } }, d]),
  );
  expect(res.errors, JSON.stringify(res.items.find((i) => i.create?.error))).to.equal(false);
}

/** Refreshes one of the service's indices (after a bulk load). */
export async function refreshIndex(ctx: StoreContext, logicalIndex: string): Promise<void> {
  await storeCall(() => ctx.client.indices.refresh({ index: aliasName(ctx.prefix, logicalIndex) }));
}
