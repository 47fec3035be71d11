/** The network-heartbeats index: every NetworkHeartbeat, time-ordered; the only code that touches it. */
import crypto from 'node:crypto';
import { DocStore, type Query, type SearchResult, type Stored } from '../../store/doc-store.js';
import { aliasName, readRetries, type StoreContext } from '../../store/client.js';
import { storeCall } from '../../store/errors.js';
import type { PageQuery } from '../../store/page-query.js';
import type { NetworkHeartbeatDoc } from './model.js';

/**
 * A retried heartbeat (same endpoint, same timestamp) overwrites itself instead of
 * duplicating; hashed because the endpoint id is not looked up and could exceed the
 * 512-byte document id limit.
 */
export function heartbeatId(endpointId: string, timestamp: string): string {
  return crypto.createHash('sha256').update(`${endpointId}\u0000${new Date(timestamp).toISOString()}`).digest('hex').slice(0, 40);
}

/** One concrete index behind the heartbeats alias (a rollover generation). */
export interface HeartbeatGeneration {
  index: string;
  isWriteIndex: boolean;
  createdAt: number;
  /** Epoch ms of its newest heartbeat's timestamp; undefined when it holds none. */
  newest: number | undefined;
}

/**
 * The alias is a rollover write alias (issue 15): writes go to the newest generation, reads
 * (searches) span them all, and whole old generations are deleted by HeartbeatRetention.
 */
export class HeartbeatStore {
  private readonly docs: DocStore<NetworkHeartbeatDoc>;
  private readonly alias: string;
  constructor(private readonly ctx: StoreContext) {
    this.docs = new DocStore<NetworkHeartbeatDoc>(ctx, 'network-heartbeats', 'network heartbeat');
    this.alias = aliasName(ctx.prefix, 'network-heartbeats');
  }

  /** Rolls the write alias over to a new generation when the current one is older than `maxAge` or larger than `maxSize` (always without conditions). */
  async rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean> {
    const res = await storeCall(() =>
      this.ctx.client.indices.rollover({
        alias: this.alias,
        ...(conditions ? { conditions: { max_age: conditions.maxAge, max_primary_shard_size: conditions.maxPrimaryShardSize } } : {}),
      }),
    );
    return res.rolled_over;
  }

  /** The generations behind the alias with their newest heartbeat (one index listing, one aggregation). */
  async generations(): Promise<HeartbeatGeneration[]> {
    const [indices, agg] = await Promise.all([
      storeCall(() => this.ctx.client.indices.get({ index: this.alias, features: ['aliases', 'settings'] }, readRetries)),
      storeCall(() =>
        this.ctx.client.search(
          {
            index: this.alias,
            size: 0,
            aggs: { generations: { terms: { field: '_index', size: 10_000 }, aggs: { newest: { max: { field: 'timestamp' } } } } },
          },
          readRetries,
        ),
      ),
    ]);
    const newest = new Map<string, number>();
    const buckets = (agg.aggregations?.generations as { buckets?: { key: string; newest: { value: number | null } }[] } | undefined)?.buckets ?? [];
    for (const b of buckets) if (b.newest.value !== null) newest.set(b.key, b.newest.value);
    return Object.entries(indices)
      .map(([index, state]) => ({
        index,
        isWriteIndex: state.aliases?.[this.alias]?.is_write_index === true,
        createdAt: Number(state.settings?.index?.creation_date ?? 0),
        newest: newest.get(index),
      }))
      .sort((a, b) => a.index.localeCompare(b.index));
  }

  /** Deletes one whole generation (never the write index: the caller checks). */
  async deleteGeneration(index: string): Promise<void> {
    await storeCall(() => this.ctx.client.indices.delete({ index }));
  }

  /** Hot-path write: keyed (idempotent) and without a forced refresh. */
  put(doc: NetworkHeartbeatDoc): Promise<Stored<NetworkHeartbeatDoc>> {
    return this.docs.put(doc.id, doc, { refresh: false });
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<NetworkHeartbeatDoc>> {
    return this.docs.search({ query, ...page });
  }
}
