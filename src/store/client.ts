/** The Elasticsearch client, its settings and health, and the context every store module receives. */
import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Client, ClusterConnectionPool, SniffingTransport, errors } from '@elastic/elasticsearch';
import type { OrgAncestry, OrgPathFields } from './org-path.js';
import type { IndexLayout, StoreSecurity } from '../config.js';

export type { IndexLayout, StoreSecurity };

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
  /** Replicas and shards of the service's indices (unset: the defaults of `indexLayoutSettings`). */
  layout?: IndexLayout;
  /**
   * The organization tree, for the ancestry (`orgPath`) stamped on org-scoped records
   * (src/store/org-path.ts). Unset: writes carry no ancestry (tools that copy stored documents).
   */
  ancestry?: OrgAncestry;
  /**
   * The org-scoped indices by logical name and where their records keep the organization, as
   * their stores declare it (collected by the composition root): what a reindex and the ancestry
   * rewrites stamp. Unset: none (a context without `ancestry` stamps nothing anyway).
   */
  orgScoped?: Readonly<Record<string, OrgPathFields>>;
}



/** A start-up failure that retrying cannot cure (credentials, privileges, TLS trust); its message names the variable to fix. */
export class StoreAccessError extends Error {
  override name = 'StoreAccessError';
}

function tlsOptions(security: StoreSecurity): { tls?: ConnectionOptions; caFingerprint?: string } {
  let ca: Buffer | undefined;
  if (security.caFile) {
    try {
      ca = fs.readFileSync(security.caFile);
    } catch (err) {
      throw new StoreAccessError(`ELASTICSEARCH_CA_FILE: cannot read ${security.caFile} (${(err as Error).message})`);
    }
  }
  if (security.caFingerprint) {
    // The pin replaces chain verification unless a CA file is given too (then both must hold),
    // as elasticsearch-js documents for self-signed clusters.
    return { caFingerprint: security.caFingerprint, tls: ca ? { ca } : { rejectUnauthorized: false } };
  }
  return ca ? { tls: { ca } } : {};
}

/** The one way a client is built: one or several comma-separated node URLs, credentials, TLS trust. */
/**
 * The client's transport while tracing is off: its own OpenTelemetry instrumentation switched
 * off, so no span is even started (docs/adr/0090-opentelemetry-traces.md). While tracing is on,
 * the stock transport makes one client span per request under the active span.
 */
class UntracedTransport extends SniffingTransport {
  constructor(opts: ConstructorParameters<typeof SniffingTransport>[0]) {
    super({ ...opts, openTelemetry: { enabled: false } });
  }
}

export function createClient(url: string, requestTimeoutMs: number, security: StoreSecurity = {}, traced = false): Client {
  const nodes = url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
  const auth = security.apiKey
    ? { apiKey: security.apiKey }
    : security.username !== undefined && security.password !== undefined
      ? { username: security.username, password: security.password }
      : undefined;
  return new Client({
    nodes,
    ...(auth ? { auth } : {}),
    ...tlsOptions(security),
    requestTimeout: requestTimeoutMs,
    // Writes are retried by the caller only when they are idempotent; reads opt in per call.
    maxRetries: 0,
    compression: false,
    // A node that fails a request is left out (round-robin over the others) until a ping finds
    // it alive again; the default weighted pool keeps sending it a share of requests, and with no
    // retries each of those would fail.
    ConnectionPool: ClusterConnectionPool,
    // The configured list is the node list: nodes behind containers or NAT advertise addresses
    // this process cannot reach, so sniffing would replace good URLs with unreachable ones.
    sniffOnStart: false,
    sniffInterval: false,
    sniffOnConnectionFault: false,
    ...(traced ? {} : { Transport: UntracedTransport }),
  });
}

const tlsTrustFailure =
  /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid|does not match certificate's altnames|CA fingerprint does not match|malformed certificate/i;

/**
 * The clear cause of a store failure that retrying cannot cure — rejected credentials (401),
 * missing privileges (403), an untrusted certificate — naming the variable to fix; undefined
 * for transient failures (unreachable, time-outs, red indices), which are retried.
 */
export function storeAccessFailure(err: unknown, security: StoreSecurity): StoreAccessError | undefined {
  if (err instanceof StoreAccessError) return err;
  if (err instanceof errors.ResponseError && (err.statusCode === 401 || err.statusCode === 403)) {
    const reason = (err.body as { error?: { reason?: string } } | undefined)?.error?.reason ?? err.message;
    const credentials = security.apiKey
      ? 'ELASTICSEARCH_API_KEY'
      : security.username !== undefined
        ? 'ELASTICSEARCH_USERNAME / ELASTICSEARCH_PASSWORD'
        : undefined;
    if (err.statusCode === 401) {
      return new StoreAccessError(
        credentials
          ? `Elasticsearch rejected the credentials (401: ${reason}); fix ${credentials}`
          : `Elasticsearch requires authentication (401: ${reason}); set ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME + ELASTICSEARCH_PASSWORD`,
      );
    }
    return new StoreAccessError(
      `Elasticsearch denied a request the service needs (403: ${reason}); grant the user of ${credentials ?? 'the configured credentials'} the index privileges on the service's indices and index templates`,
    );
  }
  if (err instanceof errors.ConnectionError && tlsTrustFailure.test(err.message)) {
    const fix = /CA fingerprint does not match/i.test(err.message)
      ? 'fix ELASTICSEARCH_CA_FINGERPRINT (the SHA-256 fingerprint of the CA that signed the node certificate)'
      : /altnames/i.test(err.message)
        ? 'use an ELASTICSEARCH_URL host named in the node certificate'
        : 'set ELASTICSEARCH_CA_FILE to the PEM CA that signed it, or ELASTICSEARCH_CA_FINGERPRINT to its SHA-256 fingerprint';
    return new StoreAccessError(`the Elasticsearch node certificate is not trusted (${err.message}); ${fix}`);
  }
  return undefined;
}

/** Retries for idempotent reads, passed as transport options. */
export const readRetries = { maxRetries: 2 } as const;

/** Alias through which a logical index is read and written. */
export function aliasName(prefix: string, logical: string): string {
  return `${prefix}-${logical}`;
}

/**
 * True when the cluster answers and, given the service's aliases, none of them is missing or
 * red: after a restart the node answers before their shards are recovered, and reads would
 * still be 503. Only these names are checked, never `<prefix>-*`, which also matches other
 * deployments' indices (`ecs-bench-*`, test prefixes) on a shared cluster.
 */
export async function storeAnswers(client: Client, aliases?: readonly string[]): Promise<boolean> {
  try {
    // A missing alias answers 408 (red) after the time-out, which throws: not ready.
    const health = await client.cluster.health(
      { timeout: '2s', ...(aliases && aliases.length > 0 ? { index: aliases.join(',') } : {}) },
      { requestTimeout: 3000 },
    );
    return !aliases || health.status !== 'red';
  } catch {
    return false;
  }
}
