/**
 * A rollover write alias (network heartbeats, audit events): writes go to the
 * newest generation behind the alias, searches span them all, and whole old generations are
 * deleted by RolloverRetention (src/store/retention.ts). Every alias the service creates is
 * already a write alias over `…-000001`, so any logical index can be used this way.
 */
import { aliasName, readRetries, type StoreContext } from './client.js';
import { storeCall } from './errors.js';

/** One concrete index behind a rollover alias (a generation). */
export interface Generation {
  index: string;
  isWriteIndex: boolean;
  createdAt: number;
  /** Epoch ms of its newest document's time field; undefined when it holds none. */
  newest: number | undefined;
}

/** What retention needs of a rollover alias. */
export interface GenerationalIndex {
  rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean>;
  generations(): Promise<Generation[]>;
  deleteGeneration(index: string): Promise<void>;
}

export class RolloverAlias implements GenerationalIndex {
  readonly alias: string;
  constructor(
    private readonly ctx: StoreContext,
    logicalIndex: string,
    /** The date field whose maximum dates a generation. */
    private readonly timeField: string,
  ) {
    this.alias = aliasName(ctx.prefix, logicalIndex);
  }

  /** Rolls the write alias over to a new generation when the current one is older than `maxAge` or larger than `maxSize` (always without conditions). */
  async rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean> {
    const res = await storeCall(() =>
      this.ctx.client.indices.rollover({
        alias: this.alias,
        ...(conditions
          ? { conditions: { max_age: conditions.maxAge, max_primary_shard_size: conditions.maxPrimaryShardSize } }
          : {}),
      }),
    );
    return res.rolled_over;
  }

  /** The generations behind the alias with their newest document (one index listing, one aggregation). */
  async generations(): Promise<Generation[]> {
    const [indices, agg] = await Promise.all([
      storeCall(() =>
        this.ctx.client.indices.get({ index: this.alias, features: ['aliases', 'settings'] }, readRetries),
      ),
      storeCall(() =>
        this.ctx.client.search(
          {
            index: this.alias,
            size: 0,
            aggs: {
              generations: {
                terms: { field: '_index', size: 10_000 },
                aggs: { newest: { max: { field: this.timeField } } },
              },
            },
          },
          readRetries,
        ),
      ),
    ]);
    const newest = new Map<string, number>();
    const buckets =
      (agg.aggregations?.generations as { buckets?: { key: string; newest: { value: number | null } }[] } | undefined)
        ?.buckets ?? [];
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
}
