/** Every environment variable the service reads, validated once with joi and typed. */
import Joi from 'joi';
import { LANES, type Lane } from './http/admission.js';

export interface Config {
  host: string;
  port: number;
  elasticsearchUrl: string | undefined;
  indexPrefix: string;
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
  /** Admission lanes in front of the store (src/http/admission.ts); false: every request runs at once. */
  admission: boolean;
  /** Fixed concurrency limits per lane instead of the adaptive ones. */
  laneLimits: Partial<Record<Lane, number>>;
  /** Longest queue wait per lane, overriding the defaults. */
  laneQueueMs: Partial<Record<Lane, number>>;
  tokenNegativeCacheSeconds: number;
  authFailuresPerMinute: number;
}

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

const schema = Joi.object({
  HOST: Joi.string().default('0.0.0.0'),
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  ELASTICSEARCH_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  ECS_INDEX_PREFIX: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9_-]*$/)
    .max(40)
    .default('ecs'),
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
  ECS_ADMISSION: Joi.boolean().truthy('1').falsy('0').default(true),
  ECS_LANE_LIMITS: laneMap,
  ECS_LANE_QUEUE_MS: laneMap,
  ECS_TOKEN_NEGATIVE_CACHE_SECONDS: Joi.number().integer().min(0).default(10),
  ECS_AUTH_FAILURES_PER_MINUTE: Joi.number().integer().min(0).default(60),
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
    admission: v.ECS_ADMISSION as boolean,
    laneLimits: parseLaneMap(v.ECS_LANE_LIMITS as string),
    laneQueueMs: parseLaneMap(v.ECS_LANE_QUEUE_MS as string),
    tokenNegativeCacheSeconds: v.ECS_TOKEN_NEGATIVE_CACHE_SECONDS as number,
    authFailuresPerMinute: v.ECS_AUTH_FAILURES_PER_MINUTE as number,
  };
}
