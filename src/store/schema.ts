/**
 * Schema versions across releases (docs/adr/0095-schema-versions-rolling-upgrades.md). Each
 * index template carries its version twice — Elasticsearch's template `version` and
 * `_meta.version` — and each index's mapping carries the version it was built from in its
 * `_meta`. During a rolling upgrade instances of two releases share one store, so:
 *  - an instance never replaces a template of a higher version than its own (a newer release
 *    runs), and says so in one log line;
 *  - an instance restores a template of a lower version (a release from before this rule put
 *    its template back at start), checking every ECS_SCHEMA_CHECK_SECONDS;
 *  - an instance whose code needs a higher mapping version than an index holds upgrades it:
 *    in place when Elasticsearch accepts and applies the change (added fields; an object's own
 *    parameters it would keep silently count as refused: `objectParametersKept`), otherwise through the
 *    generations — a rollover alias rolls over to a generation built from the new template, any
 *    other index is reindexed into its next generation and its alias swapped (src/store/reindex.ts)
 *    while every instance keeps serving. One instance at a time reindexes an index (a lease).
 */
import type { estypes } from '@elastic/elasticsearch';
import type { Logger } from '../log.js';
import { Periodic } from '../periodic.js';
import { aliasName, type StoreContext } from './client.js';
import { loadTemplates, type IndexTemplateFile } from './indices.js';
import { putTemplate } from './put-template.js';
import { LeaseStore } from './lease.js';
import { reindex, type ReindexOptions, type ReindexResult } from './reindex.js';
import { ConflictError } from '../errors.js';
import { staticSettingsChanged } from './static-settings.js';

/** Another run (an instance or the ops CLI) holds the reindex lease of that index. */
export class ReindexLeaseHeldError extends ConflictError {}

/**
 * A reindex (src/store/reindex.ts) under the lease `schema-upgrade-<index>`, so one run at a
 * time copies an index whoever starts it (an instance upgrading the schema, the ops CLI); the
 * lease is renewed while the copy progresses and given up at the end.
 */
export async function reindexUnderLease(ctx: StoreContext, name: string, holder: string, opts: ReindexOptions = {}): Promise<ReindexResult> {
  const lease = new LeaseStore(ctx);
  const leaseName = `schema-upgrade-${name}`;
  if (!(await lease.acquire(leaseName, holder, UPGRADE_LEASE_MS, new Date()))) {
    throw new ReindexLeaseHeldError(`a reindex of ${name} is running elsewhere (lease ${leaseName} in the control index); retry once it is done`);
  }
  let renewedAt = Date.now();
  try {
    return await reindex(ctx, name, {
      ...opts,
      onProgress: async (p) => {
        await opts.onProgress?.(p);
        if (Date.now() - renewedAt < UPGRADE_LEASE_MS / 5) return;
        renewedAt = Date.now();
        await lease.acquire(leaseName, holder, UPGRADE_LEASE_MS, new Date());
      },
    });
  } finally {
    await lease.release(leaseName, holder).catch(() => undefined);
  }
}

/** Logical indices written through a rollover alias: a new template applies to their next generation. */
export const ROLLOVER_INDICES: readonly string[] = ['network-heartbeats', 'audit'];

/** How long a schema-upgrade lease lasts without renewal (renewed while the reindex copies). */
const UPGRADE_LEASE_MS = 5 * 60_000;

export interface SchemaCheck {
  /** Templates this instance put because the store held a lower version (or none). */
  templatesPut: string[];
  /** Templates left alone because the store holds a higher version: name → stored version. */
  newerTemplates: Record<string, number>;
  /** Indices whose mapping was brought to this instance's version in place. */
  mappingsInPlace: string[];
  /** Indices whose mapping is newer than this instance's: index → mapping version. */
  newerMappings: Record<string, number>;
  /** Logical indices that need a new generation (refused in place), and what was done about it. */
  generations: Record<string, 'rolled-over' | 'reindexed' | 'reindex-running-elsewhere' | 'failed'>;
}

/** The version a stored template declares (`version`, or `_meta.version` for templates written before it was set). */
function storedTemplateVersion(t: estypes.IndicesIndexTemplate): number {
  const meta = (t._meta as { version?: number } | undefined)?.version;
  return t.version ?? meta ?? 0;
}

export function mappingVersion(m: estypes.MappingTypeMapping | undefined): number {
  return (m?._meta as { version?: number } | undefined)?.version ?? 0;
}

/** The stored templates of the service's indices: alias name → version. */
async function storedTemplates(ctx: StoreContext): Promise<Map<string, number>> {
  const res = await ctx.client.indices.getIndexTemplate({ name: `${ctx.prefix}-*` }).catch((err: unknown) => {
    if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return { index_templates: [] };
    throw err;
  });
  return new Map(res.index_templates.map((t) => [t.name, storedTemplateVersion(t.index_template)]));
}

/**
 * Puts this instance's templates where the store holds a lower version (or none); with
 * `evenIfEqual` (at start) also where it holds the same version, so a changed index layout
 * (shards, replicas) reaches the template. Never where the store holds a higher version.
 */
export async function putTemplatesGuarded(
  ctx: StoreContext,
  templates: IndexTemplateFile[],
  evenIfEqual: boolean,
  check: SchemaCheck,
): Promise<void> {
  const stored = await storedTemplates(ctx);
  for (const t of templates) {
    const alias = aliasName(ctx.prefix, t.name);
    const have = stored.get(alias);
    if (have !== undefined && have > t.version) {
      check.newerTemplates[alias] = have;
      continue;
    }
    if (have !== undefined && have === t.version && !evenIfEqual) continue;
    await putTemplate(ctx, t);
    if (have === undefined || have < t.version) check.templatesPut.push(alias);
  }
}

export function emptyCheck(): SchemaCheck {
  return { templatesPut: [], newerTemplates: {}, mappingsInPlace: [], newerMappings: {}, generations: {} };
}

/** One line for what a check found, when it found anything (never a line per template). */
export function logCheck(log: Logger, check: SchemaCheck, previous?: SchemaCheck): void {
  const newer = Object.keys(check.newerTemplates).length + Object.keys(check.newerMappings).length;
  const sameNewer =
    previous !== undefined &&
    JSON.stringify([previous.newerTemplates, previous.newerMappings]) === JSON.stringify([check.newerTemplates, check.newerMappings]);
  if (newer > 0 && !sameNewer) {
    log.warn(
      { newerTemplates: check.newerTemplates, newerMappings: check.newerMappings },
      `schema: the store holds newer versions than this instance's (a newer release runs against it); left as they are: ${Object.keys({ ...check.newerTemplates, ...check.newerMappings }).join(', ')}`,
    );
  }
  const made = Object.values(check.generations).filter((g) => g === 'rolled-over' || g === 'reindexed').length;
  const changed = check.templatesPut.length + check.mappingsInPlace.length + made;
  if (changed > 0 && previous !== undefined) {
    log.info(
      { templatesPut: check.templatesPut, mappingsInPlace: check.mappingsInPlace, generations: check.generations },
      'schema: brought the store to this instance’s versions',
    );
  }
}

/**
 * Keeps the store at this instance's schema versions while it runs: restores templates an older
 * instance put back, upgrades mappings (in place or through a new generation). Runs once at
 * start and then every `intervalMs`.
 */
export class SchemaKeeper {
  private readonly periodic: Periodic;
  private last: SchemaCheck | undefined;
  private readonly reindexing = new Set<string>();

  constructor(
    private readonly ctx: StoreContext,
    private readonly log: Logger,
    intervalMs: number,
    /** This instance's name in the upgrade lease. */
    private readonly holder: string,
  ) {
    this.periodic = new Periodic('schema check', intervalMs, () => this.check(), log);
  }

  /** What the start-up set-up (ensureIndices) found: the first check reports only what changed since. */
  started(check: SchemaCheck): void {
    this.last = check;
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the checks; one in progress (a reindex) ends when the store client closes, and a later check redoes it. */
  stop(): void {
    this.periodic.stop();
  }

  /** One check (see the class comment); what it found and did. */
  async check(): Promise<SchemaCheck> {
    const check = emptyCheck();
    const templates = loadTemplates();
    await putTemplatesGuarded(this.ctx, templates, false, check);
    const upgrades = await upgradeMappings(this.ctx, templates, check);
    for (const t of upgrades) check.generations[t.name] = await this.newGeneration(t);
    logCheck(this.log, check, this.last ?? emptyCheck());
    this.last = check;
    return check;
  }

  /** A refused in-place change: roll a rollover alias over, reindex any other index (one instance at a time). */
  private async newGeneration(t: IndexTemplateFile): Promise<SchemaCheck['generations'][string]> {
    const alias = aliasName(this.ctx.prefix, t.name);
    if (ROLLOVER_INDICES.includes(t.name)) {
      await this.ctx.client.indices.rollover({ alias });
      return 'rolled-over';
    }
    if (this.reindexing.has(t.name)) return 'reindex-running-elsewhere';
    this.reindexing.add(t.name);
    try {
      this.log.info({ index: t.name, templateVersion: t.version }, `schema: reindexing ${t.name} into its next generation (version ${t.version}); every instance keeps serving`);
      // Holding the lease means no other run is copying: a next generation left by one that died is dropped.
      const res = await reindexUnderLease(this.ctx, t.name, this.holder, { restart: true });
      this.log.info({ ...res }, `schema: ${t.name} reindexed into ${res.to ?? res.from}`);
      return 'reindexed';
    } catch (err) {
      if (err instanceof ReindexLeaseHeldError) return 'reindex-running-elsewhere';
      this.log.warn({ index: t.name, err: { message: (err as Error).message } }, `schema: reindex of ${t.name} failed; retrying at the next check`);
      return 'failed';
    } finally {
      this.reindexing.delete(t.name);
    }
  }
}

/**
 * Brings the mapping of every index behind each alias to this instance's version where
 * Elasticsearch accepts it in place; notes newer mappings; returns the templates whose write
 * index refused (they need a new generation).
 */
export async function upgradeMappings(
  ctx: StoreContext,
  templates: IndexTemplateFile[],
  check: SchemaCheck,
  /** Where a refused change is warned about (at start; the keeper reports what it did instead). */
  log?: Logger,
): Promise<IndexTemplateFile[]> {
  const byAlias = new Map(templates.map((t) => [aliasName(ctx.prefix, t.name), t]));
  const aliases = await ctx.client.indices.getAlias({ name: [...byAlias.keys()] });
  const mappings = await ctx.client.indices.getMapping({ index: [...byAlias.keys()] });
  const refused: IndexTemplateFile[] = [];
  const members = new Map<string, number>();
  for (const state of Object.values(aliases)) for (const alias of Object.keys(state.aliases ?? {})) members.set(alias, (members.get(alias) ?? 0) + 1);
  for (const [index, state] of Object.entries(aliases)) {
    for (const [alias, a] of Object.entries(state.aliases ?? {})) {
      const t = byAlias.get(alias);
      if (!t) continue;
      const have = mappingVersion(mappings[index]?.mappings);
      if (have > t.version) check.newerMappings[index] = have;
      if (have >= t.version) continue;
      const kept = objectParametersKept(t.template.mappings, mappings[index]?.mappings);
      const settings = await staticSettingsChanged(ctx, index, t.template.settings);
      if (kept.length === 0 && settings.length === 0 && (await putMappingInPlace(ctx, index, t))) {
        check.mappingsInPlace.push(index);
        continue;
      }
      // An older generation of a rollover alias keeps its mapping until it ages out; the write index decides.
      if (a.is_write_index !== true && members.get(alias) !== 1) continue;
      // Until the new generation, this release's documents must be accepted here: the fields it
      // added go on in place, the index keeps its version (it still lacks the rest of the change).
      const added = await putAddedFields(ctx, index, t.template.mappings, mappings[index]?.mappings).catch(
        (err: unknown) => `refused: ${(err as Error).message}`,
      );
      log?.warn(
        { index, alias, mappingVersion: have, templateVersion: t.version, fieldsAdded: added, ...(kept.length > 0 ? { objectParametersKept: kept } : {}), ...(settings.length > 0 ? { staticSettingsChanged: settings } : {}) },
        `index ${index} has mapping version ${have}, older than its template (${t.version}), and Elasticsearch cannot make the change in place (it took the added fields): it moves to a new generation in the background (by hand: npm run ops -- reindex ${t.name})`,
      );
      if (!refused.includes(t)) refused.push(t);
    }
  }
  return refused;
}

/** The parts of a mapping this check compares: an object field, or the root. */
interface MappingNode {
  type?: string;
  enabled?: boolean;
  dynamic?: unknown;
  subobjects?: unknown;
  properties?: Record<string, MappingNode>;
}

/**
 * The object fields (paths; `''` the root) whose own parameters the template changes in a way a
 * put-mapping acknowledges without applying: Elasticsearch takes an object's `enabled`,
 * `dynamic` and `subobjects` from the existing mapping when the update leaves them out, so an
 * object disabled in the index stays disabled when the template gives it properties instead
 * (`enabled` only refuses when stated). Such a change needs a new generation, like a refused one.
 */
export function objectParametersKept(
  want: estypes.MappingTypeMapping | undefined,
  have: estypes.MappingTypeMapping | undefined,
): string[] {
  const kept: string[] = [];
  const walk = (w: MappingNode, h: MappingNode, path: string): void => {
    const isObject = (n: MappingNode): boolean => n.type === undefined || n.type === 'object' || n.type === 'nested';
    if (!isObject(w) || !isObject(h)) return;
    const differs =
      (w.enabled ?? true) !== (h.enabled ?? true) ||
      String(w.subobjects ?? true) !== String(h.subobjects ?? true) ||
      (w.dynamic === undefined && h.dynamic !== undefined);
    if (differs) kept.push(path);
    for (const [name, field] of Object.entries(w.properties ?? {})) {
      const existing = h.properties?.[name];
      if (existing) walk(field, existing, path ? `${path}.${name}` : name);
    }
  };
  if (want && have) walk(want as MappingNode, have as MappingNode, '');
  return kept;
}

/**
 * The fields of `want` that `have` lacks (whole), under the objects both hold and the index
 * indexes: what a put-mapping can always add. Undefined when nothing is missing.
 */
function missingFields(want: MappingNode, have: MappingNode, path: string, names: string[]): Record<string, MappingNode> | undefined {
  let missing: Record<string, MappingNode> | undefined;
  for (const [name, field] of Object.entries(want.properties ?? {})) {
    const existing = have.properties?.[name];
    const at = path ? `${path}.${name}` : name;
    if (!existing) {
      names.push(at);
      (missing ??= {})[name] = field;
      continue;
    }
    if (existing.enabled === false || (existing.type ?? 'object') !== (field.type ?? 'object')) continue;
    const inner = missingFields(field, existing, at, names);
    if (inner) (missing ??= {})[name] = { ...(field.type ? { type: field.type } : {}), properties: inner };
  }
  return missing;
}

/** Puts on `index` the fields of the template it lacks (the expand half of a change); the paths added. */
async function putAddedFields(
  ctx: StoreContext,
  index: string,
  want: estypes.MappingTypeMapping,
  have: estypes.MappingTypeMapping | undefined,
): Promise<string[]> {
  const names: string[] = [];
  const properties = have ? missingFields(want as MappingNode, have as MappingNode, '', names) : undefined;
  if (!properties) return [];
  await ctx.client.indices.putMapping({ index, properties: properties as Record<string, estypes.MappingProperty> });
  return names;
}

/** Puts a newer template's mapping on an existing index; false when Elasticsearch refuses it in place. */
async function putMappingInPlace(ctx: StoreContext, index: string, t: IndexTemplateFile): Promise<boolean> {
  try {
    await ctx.client.indices.putMapping({ index, ...t.template.mappings, _meta: { ...(t.template.mappings._meta ?? {}), version: t.version } });
    return true;
  } catch {
    return false;
  }
}
