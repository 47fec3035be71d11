/**
 * Reindex with an alias swap, using only core APIs (the zip distribution has no _reindex).
 *
 * A logical index `<name>` is read and written through the alias `<prefix>-<name>`, which
 * points at one generation `<prefix>-<name>-00000N`. A reindex:
 *  1. puts the current template and creates generation N+1 from it;
 *  2. notes the source's checkpoint (the lowest primary local checkpoint: every operation
 *     at or below it is indexed), refreshes, and copies every document with a point in time
 *     + search_after + the bulk helper, keeping each document's `_version` (external_gte
 *     versioning, so integer record versions survive the move and an older copy never
 *     overwrites a newer one);
 *  3. catches up, while writes keep flowing, documents written after the checkpoint
 *     (`_seq_no` above it), round after round, and removes from the copy documents deleted
 *     meanwhile (found when the counts differ: ids of the copy missing from the source);
 *  4. blocks writes on the source (the add-block API waits for in-flight writes), does a
 *     last catch-up, checks that both hold the same number of documents, and swaps the
 *     alias in one atomic update. Writes refused during that short block answer 503 with
 *     Retry-After (the store maps the cluster block), so a client retries and its write
 *     lands in the new generation: nothing is lost, nothing is dual-written.
 * The old generation stays, read-only and out of the alias, unless `deleteOld`. A run whose
 * mapping is already current is a no-op. A run that fails before the swap removes its write
 * block; a run killed during the block leaves it, and the next run (with `restart`) clears it.
 * After a swap, SeqNoPrimaryTerm versions held by clients are stale (sequence numbers are per
 * index): such writes answer 409 and the client re-reads. Integer versions stay valid.
 * Records of an org-scoped index are copied with the ancestry of their organization as the
 * context's tree knows it (docs/adr/0085), so a reindex also migrates records that had none.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { StoreContext } from './client.js';
import { aliasName } from './client.js';
import { concreteIndexName, loadTemplates } from './indices.js';
import { putTemplate } from './put-template.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { esErrorType } from './errors.js';
import { pitPages } from './pit.js';
import { orgOf, pathsOf, withPath, type OrgPathFields } from './org-path.js';

export type ReindexPhase = 'copy' | 'catch-up' | 'final';

export interface ReindexProgress {
  phase: ReindexPhase;
  /** Documents copied in this phase so far. */
  copied: number;
  /** Documents in the source when the run started. */
  total: number;
}

export interface ReindexOptions {
  /** Reindex even when the mapping is current. */
  force?: boolean;
  /** Drop the next generation left by an interrupted run, and its write block on the source. */
  restart?: boolean;
  /** Delete the old generation after the swap (default: keep it, read-only). */
  deleteOld?: boolean;
  batchSize?: number;
  /** Called after every copied page; awaited. */
  onProgress?: (p: ReindexProgress) => void | Promise<void>;
}

export interface ReindexResult {
  index: string;
  alias: string;
  status: 'current' | 'reindexed';
  from: string;
  to?: string;
  fromVersion: number;
  templateVersion: number;
  /** Documents copied in the first pass. */
  copied: number;
  /** Documents copied again because they were written during the copy. */
  caughtUp: number;
  /** Documents removed from the copy because they were deleted during the copy. */
  removed: number;
  catchUpRounds: number;
  /** Documents in the new generation after the swap. */
  documents: number;
  writeBlockedMs: number;
  oldIndex: 'kept' | 'deleted';
}

const MAX_LIVE_ROUNDS = 5;

interface Hit {
  id: string;
  version: number;
  routing?: string;
  source: unknown;
}

function mappingVersion(m: estypes.IndicesGetMappingIndexMappingRecord | undefined): number {
  return (m?.mappings._meta as { version?: number } | undefined)?.version ?? 0;
}

/** The logical index names that have a template. */
export function reindexableIndices(): string[] {
  return loadTemplates().map((t) => t.name);
}

export class Reindexer {
  private readonly batchSize: number;
  /** The organization fields of the index being copied, when it is org-scoped and the context knows the tree. */
  private orgFields: OrgPathFields | undefined;

  constructor(
    private readonly ctx: StoreContext,
    private readonly opts: ReindexOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 1000;
  }

  private get client(): StoreContext['client'] {
    return this.ctx.client;
  }

  /** Reindexes the logical index `name` (see the module comment). */
  async run(name: string): Promise<ReindexResult> {
    const t = loadTemplates().find((x) => x.name === name);
    if (!t) throw new NotFoundError(`no index template named ${name}; known: ${reindexableIndices().join(', ')}`);
    await putTemplate(this.ctx, t);
    this.orgFields = this.ctx.ancestry ? this.ctx.orgScoped?.[name] : undefined;
    const alias = aliasName(this.ctx.prefix, name);
    const members = await this.client.indices.getAlias({ name: alias }).catch((err: unknown) => {
      if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) {
        throw new NotFoundError(`alias ${alias} does not exist; start the service once to create it`);
      }
      throw err;
    });
    const current = Object.keys(members);
    if (current.length !== 1) {
      // network-heartbeats, audit and changes are rollover aliases: a new template applies at the next rollover.
      const rollover = ['network-heartbeats', 'audit', 'changes'].includes(name) ? '; it is rollover-managed: its next generation takes the new template, old ones age out' : '';
      throw new ConflictError(`alias ${alias} points at ${current.length} indices (${current.join(', ')})${rollover}`);
    }
    const from = current[0];
    const fromVersion = mappingVersion((await this.client.indices.getMapping({ index: from }))[from]);
    const base: ReindexResult = {
      index: name,
      alias,
      status: 'current',
      from,
      fromVersion,
      templateVersion: t.version,
      copied: 0,
      caughtUp: 0,
      removed: 0,
      catchUpRounds: 0,
      documents: await this.count(from),
      writeBlockedMs: 0,
      oldIndex: 'kept',
    };
    if (fromVersion >= t.version && !this.opts.force) return base;

    const generation = Number(/-(\d{6})$/.exec(from)?.[1] ?? '1');
    const to = concreteIndexName(this.ctx.prefix, name, generation + 1);
    if (await this.client.indices.exists({ index: to })) {
      if (!this.opts.restart) {
        throw new ConflictError(
          `${to} exists: a reindex of ${name} is in progress or was interrupted; if none is running, rerun with --restart`,
        );
      }
      await this.client.indices.delete({ index: to });
    }
    if (this.opts.restart) await this.setWriteBlock(from, false);
    try {
      await this.client.indices.create({ index: to });
    } catch (err) {
      if (esErrorType(err) === 'resource_already_exists_exception') {
        throw new ConflictError(`${to} was just created by another reindex of ${name}`);
      }
      throw err;
    }
    return this.copyAndSwap({ ...base, status: 'reindexed', to }, from, to);
  }

  private async copyAndSwap(result: ReindexResult, from: string, to: string): Promise<ReindexResult> {
    const total = result.documents;
    let swapped = false;
    let blockedAt: number | undefined;
    try {
      // 1. the first pass, from a point in time after the checkpoint.
      let checkpoint = await this.checkpoint(from);
      await this.client.indices.refresh({ index: from });
      result.copied = await this.copy(from, to, { match_all: {} }, 'copy', total);

      // 2. catch up while writes flow, until a round is small.
      for (let round = 0; round < MAX_LIVE_ROUNDS; round++) {
        const next = await this.checkpoint(from);
        await this.client.indices.refresh({ index: from });
        const n = await this.copy(from, to, { range: { _seq_no: { gt: checkpoint } } }, 'catch-up', total);
        result.caughtUp += n;
        result.catchUpRounds += 1;
        checkpoint = next;
        if (n <= this.batchSize) break;
      }
      result.removed += await this.removeDeleted(from, to);

      // 3. block writes, last catch-up, verify, swap.
      blockedAt = Date.now();
      await this.client.indices.addBlock({ index: from, block: 'write' });
      await this.client.indices.refresh({ index: from });
      result.caughtUp += await this.copy(from, to, { range: { _seq_no: { gt: checkpoint } } }, 'final', total);
      result.removed += await this.removeDeleted(from, to);
      const [a, b] = [await this.count(from), await this.count(to)];
      if (a !== b) throw new Error(`copy of ${from} holds ${b} documents, the source ${a}; the alias was not moved`);
      await this.client.indices.updateAliases({
        actions: [
          { remove: { index: from, alias: result.alias } },
          { add: { index: to, alias: result.alias, is_write_index: true } },
        ],
      });
      swapped = true;
      result.writeBlockedMs = Date.now() - blockedAt;
      result.documents = b;
    } finally {
      if (!swapped && blockedAt !== undefined) await this.setWriteBlock(from, false).catch(() => undefined);
    }
    if (this.opts.deleteOld) {
      await this.client.indices.delete({ index: from });
      result.oldIndex = 'deleted';
    }
    return result;
  }

  private async setWriteBlock(index: string, on: boolean): Promise<void> {
    await this.client.indices.putSettings({ index, settings: { 'index.blocks.write': on ? true : null } });
  }

  private async count(index: string): Promise<number> {
    await this.client.indices.refresh({ index });
    return (await this.client.count({ index })).count;
  }

  /** The lowest local checkpoint of the primaries: every operation at or below it is indexed. */
  private async checkpoint(index: string): Promise<number> {
    const stats = await this.client.indices.stats({ index, level: 'shards' });
    const shards = stats.indices?.[index]?.shards ?? {};
    let min = Number.POSITIVE_INFINITY;
    for (const copies of Object.values(shards)) {
      for (const c of copies as estypes.IndicesStatsShardStats[]) {
        if (c.routing?.primary) min = Math.min(min, c.seq_no?.local_checkpoint ?? -1);
      }
    }
    return Number.isFinite(min) ? min : -1;
  }

  /** Pages of a point-in-time search of `index` (memory bounded by the batch size). */
  private pages(index: string, query: estypes.QueryDslQueryContainer, source: boolean): AsyncGenerator<estypes.SearchHit<unknown>[]> {
    return pitPages<unknown>(this.client, { index, query, size: this.batchSize, params: { version: true, _source: source } });
  }

  /**
   * Copies the matching documents of `from` into `to` with their versions. A copy already
   * holding a newer version than the source's (a document deleted and recreated since) is
   * overwritten: the source is the truth.
   */
  private async copy(
    from: string,
    to: string,
    query: estypes.QueryDslQueryContainer,
    phase: ReindexPhase,
    total: number,
  ): Promise<number> {
    let copied = 0;
    const conflicts: Hit[] = [];
    const failures: string[] = [];
    const onProgress = this.opts.onProgress;
    const pages = this.pages(from, query, true);
    const f = this.orgFields;
    const ancestry = this.ctx.ancestry;
    async function* docs(): AsyncGenerator<Hit> {
      for await (const page of pages) {
        const paths = f && ancestry ? await pathsOf(ancestry, page.flatMap((h) => orgOf(h._source, f) ?? [])) : undefined;
        for (const h of page) {
          const org = f ? orgOf(h._source, f) : undefined;
          const source = f && org !== undefined ? withPath(h._source, f, paths?.get(org) ?? [org]) : h._source;
          yield { id: h._id as string, version: h._version ?? 1, routing: h._routing, source };
        }
        copied += page.length;
        await onProgress?.({ phase, copied, total });
      }
    }
    const indexAction = (d: Hit): [{ index: estypes.BulkIndexOperation }, unknown] => [
      { index: { _index: to, _id: d.id, version: d.version, version_type: 'external_gte', routing: d.routing } },
      d.source,
    ];
    await this.client.helpers.bulk<Hit>({
      datasource: docs(),
      onDocument: indexAction,
      retries: 3,
      wait: 1000,
      flushBytes: 5_000_000,
      concurrency: 2,
      onDrop: (drop) => {
        if (drop.status === 409) conflicts.push(drop.document);
        else failures.push(`${drop.document.id}: ${drop.error?.reason ?? drop.status}`);
      },
    });
    if (conflicts.length > 0) {
      const res = await this.client.bulk({
        operations: conflicts.flatMap((d) => [{ delete: { _index: to, _id: d.id, routing: d.routing } }, ...indexAction(d)]),
      });
      for (const it of res.items) {
        const r = it.index ?? it.delete;
        if (r?.error && !(it.delete && r.status === 404)) failures.push(`${r._id}: ${r.error.reason ?? r.status}`);
      }
    }
    if (failures.length > 0) {
      throw new Error(`copying ${from} to ${to} failed for ${failures.length} documents, e.g. ${failures.slice(0, 3).join('; ')}`);
    }
    return copied;
  }

  /** Removes from `to` the documents that `from` no longer has (deleted during the copy). */
  private async removeDeleted(from: string, to: string): Promise<number> {
    if ((await this.count(from)) === (await this.count(to))) return 0;
    let removed = 0;
    for await (const page of this.pages(to, { match_all: {} }, false)) {
      const ids = page.map((h) => h._id as string);
      const res = await this.client.mget({ index: from, ids, _source: false });
      const gone = res.docs.filter((d) => !('found' in d && d.found)).map((d) => d._id);
      if (gone.length === 0) continue;
      await this.client.bulk({ operations: gone.map((id) => ({ delete: { _index: to, _id: id } })) });
      removed += gone.length;
    }
    return removed;
  }
}

/** Reindexes one logical index (see Reindexer). */
export function reindex(ctx: StoreContext, name: string, opts: ReindexOptions = {}): Promise<ReindexResult> {
  return new Reindexer(ctx, opts).run(name);
}
