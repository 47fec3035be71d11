/** The Elasticsearch client, its settings and health, and the context every store module receives. */
import { Client } from '@elastic/elasticsearch';

export type RefreshPolicy = boolean | 'wait_for';

export interface StoreContext {
  client: Client;
  prefix: string;
  /**
   * Refresh for writes that a caller reads back through search (creates, replaces, deletes).
   * Hot-path bookkeeping (connect, disconnect, heartbeats) never refreshes.
   */
  refresh: RefreshPolicy;
  /** Replicas and shards of the service's indices (unset: the defaults of `indexLayoutSettings`). */
  layout?: IndexLayout;
}

/** How the service's indices are laid out on the cluster (ECS_INDEX_REPLICAS, ECS_INDEX_SHARDS*). */
export interface IndexLayout {
  /** Replicas of every index; unset: `auto_expand_replicas: 0-1` (none on one node, one on a cluster). */
  replicas?: number;
  /** Primary shards of every index created from now on (existing indices keep theirs until a reindex). */
  shards: number;
  /** Primary shards by logical index name, overriding `shards`. */
  shardsByIndex: Record<string, number>;
}

export function createClient(url: string, requestTimeoutMs: number): Client {
  return new Client({
    node: url,
    requestTimeout: requestTimeoutMs,
    // Writes are retried by the caller only when they are idempotent; reads opt in per call.
    maxRetries: 0,
    compression: false,
  });
}

/** Retries for idempotent reads, passed as transport options. */
export const readRetries = { maxRetries: 2 } as const;

/** Alias through which a logical index is read and written. */
export function aliasName(prefix: string, logical: string): string {
  return `${prefix}-${logical}`;
}

/**
 * True when the cluster answers and, given a prefix, the service's indices are not red: after
 * a restart the node answers before their shards are recovered, and reads would still be 503.
 */
export async function storeAnswers(client: Client, prefix?: string): Promise<boolean> {
  try {
    const health = await client.cluster.health(
      { timeout: '2s', ...(prefix ? { index: `${prefix}-*`, expand_wildcards: 'all' as const } : {}) },
      { requestTimeout: 3000 },
    );
    return !prefix || health.status !== 'red';
  } catch {
    return false;
  }
}
