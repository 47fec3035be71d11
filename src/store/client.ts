/** The Elasticsearch client, its settings and health, and the context every store module receives. */
import { Client } from '@elastic/elasticsearch';

/**
 * How writes that callers read back through search become visible: `shared` waits for one
 * refresh shared with concurrent writers (src/store/visibility.ts, the service's policy);
 * `none` does not wait (tools that publish their writes themselves, e.g. with one refresh at the end).
 */
export type RefreshPolicy = 'shared' | 'none';

export interface StoreContext {
  client: Client;
  prefix: string;
  /**
   * Visibility of writes that a caller reads back through search (creates, replaces, deletes,
   * patches, state moves). Hot-path bookkeeping (connect, disconnect, heartbeats) never waits.
   */
  refresh: RefreshPolicy;
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
