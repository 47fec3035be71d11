/** Start-up checks of the service's configuration: refuse what must not run in production, warn about what is open. */
import { DEVELOPMENT_INSTALLER_SIGNING_KEY, type Config } from './config.js';
import type { RouteSpec } from './http/routes.js';
import type { Logger } from './log.js';
import { loadTemplates } from './store/indices.js';

/**
 * Throws, naming the variable as a refused setting does, when ECS_INDEX_SHARDS_BY_INDEX names an
 * index the service has no template for (the settings are read before the templates are known).
 */
export function assertKnownIndices(config: Config): void {
  const known = new Set(loadTemplates().map((t) => t.name));
  const unknown = Object.keys(config.indexLayout.shardsByIndex).filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new Error(
      `invalid configuration: "ECS_INDEX_SHARDS_BY_INDEX" failed custom validation because unknown index ${unknown.join(', ')}; known: ${[...known].join(', ')}`,
    );
  }
}

/** Throws, naming the variable, when the service would sign installer URLs with the public development key, or the layout names an unknown index. */
export function assertStartableConfig(config: Config): void {
  assertKnownIndices(config);
  if (config.installerSigningKey === DEVELOPMENT_INSTALLER_SIGNING_KEY && !config.development) {
    throw new Error(
      'refusing to start: ECS_INSTALLER_SIGNING_KEY is unset (or the development key), so installer URLs ' +
        'would be signed with a key that is in the source code. Set ECS_INSTALLER_SIGNING_KEY to a secret ' +
        '(at least 16 characters), or ECS_DEVELOPMENT=true for a development run.',
    );
  }
}

/** Logs one warning when operations the spec leaves unsecured (no `sec`) answer callers that send no token. */
export function warnOpenOperations(routes: readonly RouteSpec[], config: Config, log: Logger): void {
  if (config.requireTokenEverywhere) return;
  const open = routes.filter((r) => !r.sec).map((r) => `${r.method} ${r.path}`);
  if (open.length === 0) return;
  log.warn(
    { openOperations: open },
    `ECS_REQUIRE_TOKEN_EVERYWHERE=false: ${open.length} operations the spec leaves unsecured answer callers ` +
      'without a token; set ECS_REQUIRE_TOKEN_EVERYWHERE=true unless every caller is trusted (e.g. behind a gateway)',
  );
}
