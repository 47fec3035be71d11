/** The typed settings the service runs with (src/config.ts reads and validates them from the environment). */
import type { Lane } from './lanes.js';
import type { TracingConfig } from './config-tracing.js';

/** How the service's indices are laid out on the cluster (ECS_INDEX_REPLICAS, ECS_INDEX_SHARDS*). */
export interface IndexLayout {
  /** Replicas of every index; unset: `auto_expand_replicas: 0-1` (none on one node, one on a cluster). */
  replicas?: number;
  /** Primary shards of every index created from now on (existing indices keep theirs until a reindex). */
  shards: number;
  /** Primary shards by logical index name, overriding `shards`. */
  shardsByIndex: Record<string, number>;
}

/** Credentials and TLS trust for the cluster; at most one of `apiKey` and `username`/`password`. */
export interface StoreSecurity {
  /** Encoded API key, sent as `Authorization: ApiKey <key>`. */
  apiKey?: string;
  username?: string;
  password?: string;
  /** PEM file of the CA (or certificate) to trust. */
  caFile?: string;
  /** SHA-256 fingerprint of the CA (or leaf) certificate the node presents. */
  caFingerprint?: string;
}

export interface Config {
  host: string;
  port: number;
  /** One or several comma-separated node URLs (kept as given; the client splits them). */
  elasticsearchUrl: string | undefined;
  /** Credentials and TLS trust for the cluster (ELASTICSEARCH_API_KEY / _USERNAME / _PASSWORD / _CA_FILE / _CA_FINGERPRINT). */
  elasticsearchSecurity: StoreSecurity;
  indexPrefix: string;
  /** Replicas and primary shards of the indices (ECS_INDEX_REPLICAS, ECS_INDEX_SHARDS, ECS_INDEX_SHARDS_BY_INDEX). */
  indexLayout: IndexLayout;
  adminToken: string | undefined;
  requireTokenEverywhere: boolean;
  defaultClientVersions: string | undefined;
  clientReleasesFile: string | undefined;
  bodyLimit: string;
  requestTimeoutMs: number;
  /** How long a client may take to send its request headers (a slow client is cut off after it). */
  headersTimeoutMs: number;
  storeTimeoutMs: number;
  tokenCacheSeconds: number;
  orgCacheSeconds: number;
  /** How often each instance reads the change feed (token revocations, organization changes). */
  changePollMs: number;
  /** Heartbeats older than this age out; 0 keeps them for ever. */
  heartbeatRetentionDays: number;
  /** Bulk-action jobs: endpoints acted on per second per instance, per batch, the job lease and the runner's poll. */
  jobs: {
    ratePerSecond: number;
    batchSize: number;
    leaseSeconds: number;
    pollMs: number;
    /** A SOFT_DELETE job matching more agents than this asks the person confirming it to type the count. */
    confirmTypedCount: number;
  };
  /** Audit events older than this age out; 0 keeps them for ever. */
  auditRetentionDays: number;
  logLevel: string;
  /** PostgreSQL URL, or `pglite:<dir>` / `pglite:memory` for the embedded one; unset: `pglite:.local/pglite`. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema holding the device-migration tables. */
  sqlSchema: string;
  rateLimitPerMinute: number;
  installerBaseUrl: string;
  installerSigningKey: string;
  /** ECS_DEVELOPMENT; unset: true exactly when the managed local node runs (no ELASTICSEARCH_URL). */
  development: boolean;
  installerUrlTtlSeconds: number;
  /** How long an Idempotency-Key is remembered. */
  idempotencyKeyTtlSeconds: number;
  /** How long a page-search cursor's point in time stays open after each page. */
  cursorKeepAliveSeconds: number;
  /** Admission lanes in front of the store (src/http/admission.ts); false: every request runs at once. */
  admission: boolean;
  /** Fixed concurrency limits per lane instead of the adaptive ones. */
  laneLimits: Partial<Record<Lane, number>>;
  /** Ceilings per lane (the agent lane's safety ceiling; the others' start and maximum). */
  laneMax: Partial<Record<Lane, number>>;
  /** Longest queue wait per lane, overriding the defaults. */
  laneQueueMs: Partial<Record<Lane, number>>;
  tokenNegativeCacheSeconds: number;
  authFailuresPerMinute: number;
  /** A CONNECTED endpoint not seen for this long reads as POTENTIALLY_DISCONNECTED (seconds). */
  presenceTimeoutSeconds: number;
  /** Default lifetime of a command message (seconds). */
  commandTtlSeconds: number;
  /** Moves into RETRY a command message may make; the next one fails it. */
  commandMaxRetries: number;
  /** The agent channel (docs/adr/0113-agent-channel.md): long-poll wait, WebSocket ping interval, grace after a drop (seconds). */
  channel: { waitSeconds: number; pingSeconds: number; graceSeconds: number };
  /** Day-two settings operators tune (docs/deploy.md, "Tuning"): maintenance, rollover, job retention, schema checks. */
  maintenance: MaintenanceConfig;
  /** Log lines as pino's JSON or in the Elastic Common Schema (ECS_LOG_FORMAT). */
  logFormat: 'json' | 'ecs';
  /** Addresses and CIDR ranges of the reverse proxies whose X-Forwarded-For is believed (ECS_TRUSTED_PROXIES). */
  trustedProxies: string[];
  /** OpenTelemetry traces, from the standard OTEL_* variables (docs/adr/0090-opentelemetry-traces.md). */
  tracing: TracingConfig;
  /** Single sign-on through an OpenID Connect identity provider (docs/sso.md); undefined: off. */
  oidc: OidcConfig | undefined;
  /** ECS_PUBLIC_URL: the service's external base URL (no trailing slash). */
  publicUrl: string | undefined;
  /** Login sessions' idle timeout, absolute lifetime and how often the identity provider is asked again (seconds). */
  sessions: { idleSeconds: number; maxSeconds: number; recheckSeconds: number };
  /** ECS_CONSOLE_TOKEN_SIGNIN: the console offers the token field. */
  consoleTokenSignIn: boolean;
}

/** Rollover conditions of one rollover alias (Elasticsearch's `max_age` and `max_primary_shard_size`). */
export interface RolloverConfig {
  maxAge: string;
  maxPrimaryShardSize: string;
}

export interface MaintenanceConfig {
  /** Time between retention runs (heartbeats, audit, finished jobs). */
  retentionIntervalSeconds: number;
  /** How long a retention lease outlives its holder's last run: a dead holder is replaced after this. */
  retentionLeaseSeconds: number;
  heartbeatRollover: RolloverConfig;
  auditRollover: RolloverConfig;
  /** Finished jobs older than this are deleted; 0 keeps them for ever. */
  jobRetentionDays: number;
  /** How often each instance checks the index templates and mappings against its own schema versions. */
  schemaCheckSeconds: number;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claim (ID token, else userinfo) whose values are `<role>@<orgId>`. */
  rolesClaim: string;
  /** `system` may be granted by the claim (off unless the operator turns it on). */
  allowSystemGrant: boolean;
  /** The scopes asked for at sign-in (ECS_OIDC_SCOPES; always with openid). */
  scopes: string;
}
