/** Every environment variable the service reads, validated once with joi and typed. */
import Joi from 'joi';
import proxyAddr from 'proxy-addr';
import { LANES, type Lane } from './lanes.js';
import { TRACING_ENV, tracingConfig } from './config-tracing.js';
export { TRACE_SAMPLERS, type TraceSampler, type TracingConfig } from './config-tracing.js';
import type { Config } from './config-types.js';
export type { Config, IndexLayout, MaintenanceConfig, OidcConfig, RolloverConfig, StoreSecurity } from './config-types.js';

/** `lane=n,lane=n` (a lane named twice: the later one counts). */
const laneMap = Joi.string()
  .allow('')
  .pattern(new RegExp(`^((${LANES.join('|')})=\\d{1,6})(,(${LANES.join('|')})=\\d{1,6})*$`))
  .default('');

function parseLaneMap(v: string): Partial<Record<Lane, number>> {
  const out: Partial<Record<Lane, number>> = {};
  for (const part of v.split(',').filter(Boolean)) {
    const [lane, n] = part.split('=');
    out[lane as Lane] = Number(n);
  }
  return out;
}

/** Addresses and CIDR ranges, comma-separated; each checked as proxy-addr will read it. */
const trustedProxies = Joi.string()
  .allow('')
  .default('')
  .custom((value: string, helpers) => {
    const list = value
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    try {
      proxyAddr.compile(list);
    } catch (err) {
      return helpers.message({ custom: `"ECS_TRUSTED_PROXIES" must list IP addresses or CIDR ranges: ${(err as Error).message}` });
    }
    return list.join(',');
  });

/** Signs installer URLs when ECS_INSTALLER_SIGNING_KEY is unset; the service starts with it only in development mode. */
export const DEVELOPMENT_INSTALLER_SIGNING_KEY = 'development-only-installer-signing-key';
const nodeUrl = Joi.string().uri({ scheme: ['http', 'https'] });

/** One or several comma-separated http(s) node URLs. */
const nodeUrls = Joi.string().custom((value: string, helpers) => {
  const urls = value.split(',').map((u) => u.trim());
  const bad = urls.find((u) => nodeUrl.validate(u).error !== undefined);
  if (bad !== undefined) return helpers.message({ custom: `"ELASTICSEARCH_URL" must be one or several comma-separated http(s) URLs; not a valid URL: "${bad}"` });
  return urls.join(',');
});

/** Elasticsearch time units for a rollover's age: `1d`, `12h`, `30m`, `90s`. */
const rolloverAge = (name: string, dflt: string): Joi.StringSchema =>
  Joi.string()
    .pattern(/^[1-9][0-9]{0,5}(d|h|m|s)$/)
    .default(dflt)
    .messages({ 'string.pattern.base': `"${name}" must be a positive whole number of d, h, m or s (e.g. 1d, 12h)` });
/** Elasticsearch byte sizes for a rollover's primary shard size: `10gb`, `500mb`. */
const rolloverSize = (name: string, dflt: string): Joi.StringSchema =>
  Joi.string()
    .lowercase()
    .pattern(/^[1-9][0-9]{0,6}(b|kb|mb|gb|tb)$/)
    .default(dflt)
    .messages({ 'string.pattern.base': `"${name}" must be a positive whole number of b, kb, mb, gb or tb (e.g. 10gb)` });

const schema = Joi.object({
  HOST: Joi.string().default('0.0.0.0'),
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  ELASTICSEARCH_URL: nodeUrls,
  ELASTICSEARCH_API_KEY: Joi.string(),
  ELASTICSEARCH_USERNAME: Joi.string(),
  ELASTICSEARCH_PASSWORD: Joi.string(),
  ELASTICSEARCH_CA_FILE: Joi.string(),
  // SHA-256, hex, with or without colons (as `openssl x509 -fingerprint -sha256` and Elasticsearch print it).
  ELASTICSEARCH_CA_FINGERPRINT: Joi.string()
    .pattern(/^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$|^[0-9A-Fa-f]{64}$/)
    .messages({ 'string.pattern.base': '"ELASTICSEARCH_CA_FINGERPRINT" must be a SHA-256 fingerprint (64 hex digits, colons allowed)' }),
  ECS_INDEX_PREFIX: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9_-]*$/)
    .max(40)
    .default('ecs'),
  ECS_INDEX_REPLICAS: Joi.number().integer().min(0).max(10),
  ECS_INDEX_SHARDS: Joi.number().integer().min(1).max(64).default(1),
  // Its index names are checked against the templates at start (src/start-checks.ts): the settings know no store.
  ECS_INDEX_SHARDS_BY_INDEX: Joi.string().pattern(/^[a-z0-9-]+=[1-9][0-9]?(,[a-z0-9-]+=[1-9][0-9]?)*$/),
  ECS_ADMIN_TOKEN: Joi.string().min(16),
  ECS_REQUIRE_TOKEN_EVERYWHERE: Joi.boolean().truthy('1').falsy('0').default(false),
  ECS_DEFAULT_CLIENT_VERSIONS: Joi.string(),
  ECS_CLIENT_RELEASES_FILE: Joi.string(),
  ECS_BODY_LIMIT: Joi.string().default('1mb'),
  ECS_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  ECS_HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).default(15_000),
  ECS_STORE_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  ECS_TOKEN_CACHE_SECONDS: Joi.number().integer().min(0).default(30),
  ECS_ORG_CACHE_SECONDS: Joi.number().integer().min(0).default(30),
  ECS_CHANGE_POLL_MS: Joi.number().integer().min(50).max(10_000).default(100),
  ECS_HEARTBEAT_RETENTION_DAYS: Joi.number().integer().min(0).default(30),
  ECS_JOB_RATE_PER_SECOND: Joi.number().integer().min(1).max(100_000).default(200),
  ECS_JOB_BATCH_SIZE: Joi.number().integer().min(1).max(1000).default(100),
  ECS_JOB_LEASE_SECONDS: Joi.number().integer().min(1).max(3600).default(30),
  ECS_JOB_POLL_MS: Joi.number().integer().min(20).max(60_000).default(2000),
  ECS_JOB_CONFIRM_TYPED_COUNT: Joi.number().integer().min(0).max(10_000_000).default(100),
  ECS_AUDIT_RETENTION_DAYS: Joi.number().integer().min(0).default(365),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  DATABASE_URL: Joi.string(),
  ECS_SQL_SCHEMA: Joi.string()
    .pattern(/^[a-z_][a-z0-9_]*$/)
    .max(63)
    .default('public'),
  ECS_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(0).default(0),
  ECS_INSTALLER_BASE_URL: Joi.string().uri().default('https://downloads.example.invalid/installers'),
  ECS_INSTALLER_SIGNING_KEY: Joi.string().min(16).default(DEVELOPMENT_INSTALLER_SIGNING_KEY),
  ECS_INSTALLER_URL_TTL_SECONDS: Joi.number().integer().min(1).default(900),
  ECS_DEVELOPMENT: Joi.boolean().truthy('1').falsy('0'),
  ECS_IDEMPOTENCY_KEY_TTL_SECONDS: Joi.number().integer().min(1).default(86_400),
  ECS_CURSOR_KEEP_ALIVE_SECONDS: Joi.number().integer().min(10).max(3600).default(300),
  ECS_ADMISSION: Joi.boolean().truthy('1').falsy('0').default(true),
  ECS_LANE_LIMITS: laneMap,
  ECS_LANE_MAX: laneMap,
  ECS_LANE_QUEUE_MS: laneMap,
  ECS_TOKEN_NEGATIVE_CACHE_SECONDS: Joi.number().integer().min(0).default(10),
  ECS_AUTH_FAILURES_PER_MINUTE: Joi.number().integer().min(0).default(60),
  ECS_PRESENCE_TIMEOUT: Joi.number().integer().min(1).default(600),
  ECS_COMMAND_TTL: Joi.number().integer().min(1).default(86_400),
  ECS_COMMAND_MAX_RETRIES: Joi.number().integer().min(0).default(5),
  ECS_CHANNEL_WAIT_SECONDS: Joi.number().integer().min(1).max(3600).default(300),
  ECS_CHANNEL_PING_SECONDS: Joi.number().integer().min(1).max(600).default(30),
  ECS_CHANNEL_GRACE_SECONDS: Joi.number().integer().min(1).max(86_400).default(60),
  ECS_RETENTION_INTERVAL_SECONDS: Joi.number().integer().min(1).max(86_400).default(300),
  // Unset: three intervals, so one missed run does not hand the lease over.
  ECS_RETENTION_LEASE_SECONDS: Joi.number()
    .integer()
    .max(259_200)
    .greater(Joi.ref('ECS_RETENTION_INTERVAL_SECONDS'))
    .default((parent: { ECS_RETENTION_INTERVAL_SECONDS: number }) => 3 * parent.ECS_RETENTION_INTERVAL_SECONDS)
    .messages({ 'number.greater': '"ECS_RETENTION_LEASE_SECONDS" must be greater than "ECS_RETENTION_INTERVAL_SECONDS": the holder renews it once per interval' }),
  ECS_HEARTBEAT_ROLLOVER_AGE: rolloverAge('ECS_HEARTBEAT_ROLLOVER_AGE', '1d'),
  ECS_HEARTBEAT_ROLLOVER_SIZE: rolloverSize('ECS_HEARTBEAT_ROLLOVER_SIZE', '10gb'),
  ECS_AUDIT_ROLLOVER_AGE: rolloverAge('ECS_AUDIT_ROLLOVER_AGE', '1d'),
  ECS_AUDIT_ROLLOVER_SIZE: rolloverSize('ECS_AUDIT_ROLLOVER_SIZE', '10gb'),
  ECS_JOB_RETENTION_DAYS: Joi.number().integer().min(0).max(36_500).default(30),
  ECS_SCHEMA_CHECK_SECONDS: Joi.number().integer().min(1).max(86_400).default(60),
  ECS_LOG_FORMAT: Joi.string().valid('json', 'ecs').default('json'),
  ECS_TRUSTED_PROXIES: trustedProxies,
  ...TRACING_ENV,
  ECS_OIDC_ISSUER: Joi.string().uri({ scheme: ['http', 'https'] }),
  ECS_OIDC_CLIENT_ID: Joi.string().max(256),
  ECS_OIDC_CLIENT_SECRET: Joi.string().max(1024),
  ECS_OIDC_ROLES_CLAIM: Joi.string().max(256).default('ecs_roles'),
  ECS_OIDC_ALLOW_SYSTEM_GRANT: Joi.boolean().truthy('1').falsy('0').default(false),
  ECS_OIDC_SCOPES: Joi.string()
    .max(1024)
    .pattern(/(^|\s)openid(\s|$)/)
    .default('openid email profile')
    .messages({ 'string.pattern.base': '"ECS_OIDC_SCOPES" must include openid' }),
  ECS_PUBLIC_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .custom((v: string) => v.replace(/\/+$/, '')),
  ECS_SESSION_IDLE_SECONDS: Joi.number().integer().min(1).default(1800),
  ECS_SESSION_MAX_SECONDS: Joi.number().integer().min(1).default(43_200),
  ECS_SESSION_RECHECK_SECONDS: Joi.number().integer().min(0).default(300),
  ECS_CONSOLE_TOKEN_SIGNIN: Joi.boolean().truthy('1').falsy('0').default(true),
})
  .with('ECS_OIDC_ISSUER', ['ECS_OIDC_CLIENT_ID', 'ECS_OIDC_CLIENT_SECRET', 'ECS_PUBLIC_URL'])
  .and('ELASTICSEARCH_USERNAME', 'ELASTICSEARCH_PASSWORD')
  .without('ELASTICSEARCH_API_KEY', ['ELASTICSEARCH_USERNAME', 'ELASTICSEARCH_PASSWORD'])
  .messages({
    'object.with': '"{#main}" is set without "{#peer}": single sign-on needs ECS_OIDC_ISSUER, ECS_OIDC_CLIENT_ID, ECS_OIDC_CLIENT_SECRET and ECS_PUBLIC_URL',
    'object.and': '"ELASTICSEARCH_USERNAME" and "ELASTICSEARCH_PASSWORD" go together: {#presentWithLabels} is set without {#missingWithLabels}',
    'object.without': '"ELASTICSEARCH_API_KEY" and "{#peer}" are both set; give either an API key or basic credentials',
  })
  .unknown(true);

/** The names of the environment variables loadConfig reads (the settings tables document each). */
export function configVariables(): string[] {
  return Object.keys(schema.describe().keys ?? {});
}

/** Reads and validates the environment; throws naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) throw new Error(`invalid configuration: ${error.message}`);
  const v = value as Record<string, unknown>;
  return {
    host: v.HOST as string,
    port: v.PORT as number,
    elasticsearchUrl: v.ELASTICSEARCH_URL as string | undefined,
    elasticsearchSecurity: {
      apiKey: v.ELASTICSEARCH_API_KEY as string | undefined,
      username: v.ELASTICSEARCH_USERNAME as string | undefined,
      password: v.ELASTICSEARCH_PASSWORD as string | undefined,
      caFile: v.ELASTICSEARCH_CA_FILE as string | undefined,
      caFingerprint: v.ELASTICSEARCH_CA_FINGERPRINT as string | undefined,
    },
    indexPrefix: v.ECS_INDEX_PREFIX as string,
    indexLayout: {
      replicas: v.ECS_INDEX_REPLICAS as number | undefined,
      shards: v.ECS_INDEX_SHARDS as number,
      shardsByIndex: Object.fromEntries(
        ((v.ECS_INDEX_SHARDS_BY_INDEX as string | undefined) ?? '')
          .split(',')
          .filter((p) => p !== '')
          .map((p) => [p.split('=')[0], Number(p.split('=')[1])]),
      ),
    },
    adminToken: v.ECS_ADMIN_TOKEN as string | undefined,
    requireTokenEverywhere: v.ECS_REQUIRE_TOKEN_EVERYWHERE as boolean,
    defaultClientVersions: v.ECS_DEFAULT_CLIENT_VERSIONS as string | undefined,
    clientReleasesFile: v.ECS_CLIENT_RELEASES_FILE as string | undefined,
    bodyLimit: v.ECS_BODY_LIMIT as string,
    requestTimeoutMs: v.ECS_REQUEST_TIMEOUT_MS as number,
    headersTimeoutMs: v.ECS_HEADERS_TIMEOUT_MS as number,
    storeTimeoutMs: v.ECS_STORE_TIMEOUT_MS as number,
    tokenCacheSeconds: v.ECS_TOKEN_CACHE_SECONDS as number,
    orgCacheSeconds: v.ECS_ORG_CACHE_SECONDS as number,
    changePollMs: v.ECS_CHANGE_POLL_MS as number,
    heartbeatRetentionDays: v.ECS_HEARTBEAT_RETENTION_DAYS as number,
    jobs: {
      ratePerSecond: v.ECS_JOB_RATE_PER_SECOND as number,
      batchSize: v.ECS_JOB_BATCH_SIZE as number,
      leaseSeconds: v.ECS_JOB_LEASE_SECONDS as number,
      pollMs: v.ECS_JOB_POLL_MS as number,
      confirmTypedCount: v.ECS_JOB_CONFIRM_TYPED_COUNT as number,
    },
    auditRetentionDays: v.ECS_AUDIT_RETENTION_DAYS as number,
    logLevel: v.LOG_LEVEL as string,
    databaseUrl: v.DATABASE_URL as string | undefined,
    sqlSchema: v.ECS_SQL_SCHEMA as string,
    rateLimitPerMinute: v.ECS_RATE_LIMIT_PER_MINUTE as number,
    installerBaseUrl: v.ECS_INSTALLER_BASE_URL as string,
    installerSigningKey: v.ECS_INSTALLER_SIGNING_KEY as string,
    installerUrlTtlSeconds: v.ECS_INSTALLER_URL_TTL_SECONDS as number,
    // `npm install && npm start` on a fresh machine (managed local node) is a development run.
    development: (v.ECS_DEVELOPMENT as boolean | undefined) ?? v.ELASTICSEARCH_URL === undefined,
    idempotencyKeyTtlSeconds: v.ECS_IDEMPOTENCY_KEY_TTL_SECONDS as number,
    cursorKeepAliveSeconds: v.ECS_CURSOR_KEEP_ALIVE_SECONDS as number,
    admission: v.ECS_ADMISSION as boolean,
    laneLimits: parseLaneMap(v.ECS_LANE_LIMITS as string),
    laneMax: parseLaneMap(v.ECS_LANE_MAX as string),
    laneQueueMs: parseLaneMap(v.ECS_LANE_QUEUE_MS as string),
    tokenNegativeCacheSeconds: v.ECS_TOKEN_NEGATIVE_CACHE_SECONDS as number,
    authFailuresPerMinute: v.ECS_AUTH_FAILURES_PER_MINUTE as number,
    presenceTimeoutSeconds: v.ECS_PRESENCE_TIMEOUT as number,
    commandTtlSeconds: v.ECS_COMMAND_TTL as number,
    commandMaxRetries: v.ECS_COMMAND_MAX_RETRIES as number,
    channel: {
      waitSeconds: v.ECS_CHANNEL_WAIT_SECONDS as number,
      pingSeconds: v.ECS_CHANNEL_PING_SECONDS as number,
      graceSeconds: v.ECS_CHANNEL_GRACE_SECONDS as number,
    },
    maintenance: {
      retentionIntervalSeconds: v.ECS_RETENTION_INTERVAL_SECONDS as number,
      retentionLeaseSeconds: v.ECS_RETENTION_LEASE_SECONDS as number,
      heartbeatRollover: { maxAge: v.ECS_HEARTBEAT_ROLLOVER_AGE as string, maxPrimaryShardSize: v.ECS_HEARTBEAT_ROLLOVER_SIZE as string },
      auditRollover: { maxAge: v.ECS_AUDIT_ROLLOVER_AGE as string, maxPrimaryShardSize: v.ECS_AUDIT_ROLLOVER_SIZE as string },
      jobRetentionDays: v.ECS_JOB_RETENTION_DAYS as number,
      schemaCheckSeconds: v.ECS_SCHEMA_CHECK_SECONDS as number,
    },
    logFormat: v.ECS_LOG_FORMAT as 'json' | 'ecs',
    trustedProxies: (v.ECS_TRUSTED_PROXIES as string).split(',').filter(Boolean),
    tracing: tracingConfig(v),
    oidc:
      v.ECS_OIDC_ISSUER === undefined
        ? undefined
        : {
            issuer: v.ECS_OIDC_ISSUER as string,
            clientId: v.ECS_OIDC_CLIENT_ID as string,
            clientSecret: v.ECS_OIDC_CLIENT_SECRET as string,
            rolesClaim: v.ECS_OIDC_ROLES_CLAIM as string,
            allowSystemGrant: v.ECS_OIDC_ALLOW_SYSTEM_GRANT as boolean,
            scopes: v.ECS_OIDC_SCOPES as string,
          },
    publicUrl: v.ECS_PUBLIC_URL as string | undefined,
    sessions: {
      idleSeconds: v.ECS_SESSION_IDLE_SECONDS as number,
      maxSeconds: v.ECS_SESSION_MAX_SECONDS as number,
      recheckSeconds: v.ECS_SESSION_RECHECK_SECONDS as number,
    },
    consoleTokenSignIn: v.ECS_CONSOLE_TOKEN_SIGNIN as boolean,
  };
}
