/**
 * The audit index: append-only events behind a rollover alias (aged out like network
 * heartbeats). Appends are group-committed: the events of concurrent requests travel in one
 * bulk request (src/store/batcher.ts), each caller settling with its own item's outcome. Every
 * event has its own id and is written create-only, so re-sending an event is harmless (an
 * "already exists" answer is its acknowledgement). The only code that touches the index.
 */
import { DocStore, type Query, type SearchResult } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { storeCall } from '../../store/errors.js';
import { itemError } from '../../store/item-errors.js';
import { Batcher, type ItemOutcome } from '../../store/batcher.js';
import { RolloverAlias, type Generation, type GenerationalIndex } from '../../store/generations.js';
import type { PageQuery } from '../../store/page-query.js';
import type { AuditEvent } from './model.js';
import type { OrgScopedIndex } from '../../store/org-path.js';

/** Most events in one bulk request, and most bulk requests out at once. */
const MAX_BATCH = 500;
const MAX_IN_FLIGHT = 4;

/** Its records keep their organization in `target.orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const AUDIT_ORG_SCOPE: OrgScopedIndex = { index: 'audit', orgField: 'target.orgId' };

export class AuditStore implements GenerationalIndex {
  private readonly docs: DocStore<AuditEvent>;
  private readonly generationsOf: RolloverAlias;
  private readonly batcher: Batcher<AuditEvent, void>;

  constructor(private readonly ctx: StoreContext) {
    this.docs = new DocStore<AuditEvent>(ctx, AUDIT_ORG_SCOPE.index, 'audit event', { orgField: AUDIT_ORG_SCOPE.orgField });
    this.generationsOf = new RolloverAlias(ctx, 'audit', 'timestamp');
    this.batcher = new Batcher((events) => this.send(events), { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT, name: 'group commit audit' });
  }

  /**
   * Appends one event; resolves once Elasticsearch acknowledged the bulk request carrying it
   * (durable in the translog), without waiting for a refresh: nobody reads an event back in the
   * request that wrote it.
   */
  append(event: AuditEvent): Promise<void> {
    return this.batcher.submit(event);
  }

  /** Events waiting for a bulk slot. */
  get waiting(): number {
    return this.batcher.waiting;
  }

  private async send(events: AuditEvent[]): Promise<ItemOutcome<void>[]> {
    const stamped = await Promise.all(events.map((e) => this.docs.stamp(e)));
    const res = await storeCall(() =>
      this.ctx.client.bulk({
        index: this.docs.index,
        require_alias: true,
        operations: stamped.flatMap((e) => [{ create: { _id: e.id } }, e]),
      }),
    );
    return res.items.map((item) => {
      const r = item.create;
      // 409: the event is there already (a re-sent event whose first send was acknowledged late).
      if (!r || (r.status >= 200 && r.status < 300) || r.status === 409) return { ok: true, value: undefined };
      return { ok: false, error: itemError(r.status, r.error) };
    });
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<AuditEvent>> {
    return this.docs.search({ query, ...page });
  }

  rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean> {
    return this.generationsOf.rollover(conditions);
  }

  generations(): Promise<Generation[]> {
    return this.generationsOf.generations();
  }

  deleteGeneration(index: string): Promise<void> {
    return this.generationsOf.deleteGeneration(index);
  }
}
