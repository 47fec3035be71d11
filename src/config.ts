/** Every environment variable the service reads, validated once with joi and typed. */
import Joi from 'joi';
import type { IndexLayout } from './store/client.js';
import { loadTemplates } from './store/indices.js';

export interface Config {
  host: string;
  port: number;
  elasticsearchUrl: string | undefined;
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
  logLevel: string;
  /** PostgreSQL URL, or `pglite:<dir>` / `pglite:memory` for the embedded one; unset: `pglite:.local/pglite`. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema holding the device-migration tables. */
  sqlSchema: string;
  rateLimitPerMinute: number;
  installerBaseUrl: string;
  installerSigningKey: string;
  installerUrlTtlSeconds: number;
}

const schema = Joi.object({
  HOST: Joi.string().default('0.0.0.0'),
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  ELASTICSEARCH_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  ECS_INDEX_PREFIX: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9_-]*$/)
    .max(40)
    .default('ecs'),
  ECS_INDEX_REPLICAS: Joi.number().integer().min(0).max(10),
  ECS_INDEX_SHARDS: Joi.number().integer().min(1).max(64).default(1),
  ECS_INDEX_SHARDS_BY_INDEX: Joi.string()
    .pattern(/^[a-z0-9-]+=[1-9][0-9]?(,[a-z0-9-]+=[1-9][0-9]?)*$/)
    .custom((v: string) => {
      const known = new Set(loadTemplates().map((t) => t.name));
      const unknown = v
        .split(',')
        .map((p) => p.split('=')[0])
        .filter((n) => !known.has(n));
      if (unknown.length > 0) throw new Error(`unknown index ${unknown.join(', ')}; known: ${[...known].join(', ')}`);
      return v;
    }),
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
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  DATABASE_URL: Joi.string(),
  ECS_SQL_SCHEMA: Joi.string()
    .pattern(/^[a-z_][a-z0-9_]*$/)
    .max(63)
    .default('public'),
  ECS_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(0).default(0),
  ECS_INSTALLER_BASE_URL: Joi.string().uri().default('https://downloads.example.invalid/installers'),
  ECS_INSTALLER_SIGNING_KEY: Joi.string().min(16).default('development-only-installer-signing-key'),
  ECS_INSTALLER_URL_TTL_SECONDS: Joi.number().integer().min(1).default(900),
}).unknown(true);

/** Reads and validates the environment; throws naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) throw new Error(`invalid configuration: ${error.message}`);
  const v = value as Record<string, unknown>;
  return {
    host: v.HOST as string,
    port: v.PORT as number,
    elasticsearchUrl: v.ELASTICSEARCH_URL as string | undefined,
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
    logLevel: v.LOG_LEVEL as string,
    databaseUrl: v.DATABASE_URL as string | undefined,
    sqlSchema: v.ECS_SQL_SCHEMA as string,
    rateLimitPerMinute: v.ECS_RATE_LIMIT_PER_MINUTE as number,
    installerBaseUrl: v.ECS_INSTALLER_BASE_URL as string,
    installerSigningKey: v.ECS_INSTALLER_SIGNING_KEY as string,
    installerUrlTtlSeconds: v.ECS_INSTALLER_URL_TTL_SECONDS as number,
  };
}
