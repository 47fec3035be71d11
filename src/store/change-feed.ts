/**
 * The change feed: how a change made through one instance (a token revoked, an organization
 * created or moved) reaches the caches of every other within a second (docs/adr/0065).
 *
 * Appends never contend. Each instance is a writer with its own name and, per feed, its own
 * sequence (1, 2, 3, …); an entry is one small create-only document `<writer>/<feed>/<seq>` in
 * the `changes` index (a rollover alias, aged out by RolloverRetention like the audit trail)
 * holding the ids changed. One bulk is in flight per instance, so a writer's entries reach the
 * store in sequence order; the changes made meanwhile wait for the next bulk and share one entry
 * per feed (group commit: at 32 concurrent creates an entry carries several). An entry the store did not
 * take stays in the instance's outbox and is sent again (before any newer one) until it is
 * written; the request that made it is answered 503 meanwhile, its record already saved.
 *
 * Readers search the entries after their position: per (writer, feed) the last sequence seen,
 * plus any writer they do not follow yet. The index refreshes every 200 ms on its own (template
 * `changes.json`), so an entry is searchable within that and nobody waits for a refresh; the
 * entries of a prompt feed (`commands`) start a refresh once stored (PROMPT_FEEDS).
 */
import type { estypes } from '@elastic/elasticsearch';
import { aliasName, readRetries, type StoreContext } from './client.js';
import { storeCall, translateStoreError } from './errors.js';
import { itemError } from './item-errors.js';
import { visible } from './visibility.js';
import { RolloverAlias, type Generation, type GenerationalIndex } from './generations.js';
import { AppError, ServiceUnavailableError } from '../errors.js';

/** The feeds; adding one is adding its name here (readers and writers take any of them). */
export const FEED_NAMES = ['tokens', 'organizations', 'sessions', 'commands', 'rollouts'] as const;
export type FeedName = (typeof FEED_NAMES)[number];

/**
 * Feeds whose entries are made searchable as soon as they are stored (one shared refresh of the
 * index, not awaited by anyone) instead of at the next scheduled one: a command waits on its
 * `commands` entry to reach an agent held on another instance (docs/adr/0126).
 */
const PROMPT_FEEDS: ReadonlySet<string> = new Set<FeedName>(['commands']);

/** One change as stored: the ids one write changed. */
export interface FeedEntryDoc {
  feed: string;
  writer: string;
  seq: number;
  ids: string[];
  /** When the writer made it (its clock): dates a generation and bounds discovery. */
  at: string;
}

/** One change as read. */
export interface FeedEntry {
  feed: string;
  writer: string;
  seq: number;
  ids: string[];
  /** Epoch ms. */
  at: number;
}

/** Where a writer's feed stands: its highest sequence number stored. */
export interface FeedHead {
  writer: string;
  feed: string;
  seq: number;
}

/** What a reader asks for: the entries after its position. */
export interface FeedQuery {
  feeds: readonly string[];
  /** Writers the reader follows, with the last sequence it has of each feed (absent: 0). */
  follow: { writer: string; after: Partial<Record<string, number>> }[];
  /** Entries of any other writer made at or after this time (epoch ms): writers started since. */
  othersSince: number;
  /** A writer whose entries the reader never needs (its own). */
  exclude?: string;
}

/** Entries in one bulk request. */
const MAX_BATCH = 1000;
/** Ids in one entry at most (a larger group starts another entry). */
const MAX_IDS = 1000;
/** Entries one read returns at most (sorted by writer, feed, sequence; the rest on the next read). */
export const READ_LIMIT = 5000;
const PAGE = 1000;
/** Pause before re-sending entries the store refused, doubled per failure up to the maximum. */
const RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

interface Outgoing {
  doc: FeedEntryDoc;
  /** The requests waiting for this entry; emptied once they have been answered. */
  waiters: { resolve(): void; reject(err: unknown): void }[];
  /** Sent at least once: its content is fixed (a re-send must be the same document). */
  sealed: boolean;
}

export class ChangeFeedStore implements GenerationalIndex {
  private readonly index: string;
  private readonly generationsOf: RolloverAlias;
  private readonly seqs = new Map<string, number>();
  private outbox: Outgoing[] = [];
  private sending = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private drained: (() => void)[] = [];

  constructor(
    private readonly ctx: StoreContext,
    /** This instance's name, unique among every instance that ever writes to this store. */
    readonly writer: string,
  ) {
    this.index = aliasName(ctx.prefix, 'changes');
    this.generationsOf = new RolloverAlias(ctx, 'changes', 'at');
  }

  /**
   * Announces that `ids` changed. Resolves once the entry is stored (not waiting for a refresh).
   * Rejects with 503 when the store did not take it; the entry then stays queued and is sent
   * again, before any newer one, until it is stored — the change is announced either way.
   */
  append(feed: FeedName, ids: string[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // The changes made while no bulk carried them yet share one entry per feed (the group commit).
      let open = this.outbox.find((o) => !o.sealed && o.doc.feed === feed && o.doc.ids.length < MAX_IDS);
      if (!open) {
        const seq = (this.seqs.get(feed) ?? 0) + 1;
        this.seqs.set(feed, seq);
        open = { doc: { feed, writer: this.writer, seq, ids: [], at: new Date().toISOString() }, waiters: [], sealed: false };
        this.outbox.push(open);
      }
      for (const id of ids) if (!open.doc.ids.includes(id)) open.doc.ids.push(id);
      open.waiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Entries not yet stored (for tests and shutdown). */
  get pending(): number {
    return this.outbox.length;
  }

  /** Waits until every queued entry is stored, at most `ms` (shutdown: before the client closes). */
  async drain(ms: number): Promise<boolean> {
    if (this.outbox.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      new Promise<boolean>((resolve) => this.drained.push(() => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]);
    clearTimeout(timer);
    return done;
  }

  /** Stops re-sending (the store client is about to close). */
  stop(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private kick(): void {
    if (this.sending || this.outbox.length === 0) return;
    this.sending = true;
    // At the end of this turn of the event loop, so the changes of one I/O poll leave together.
    setImmediate(() => void this.send());
  }

  /** Sends the oldest queued entries in one bulk; one bulk in flight, so a writer's entries are stored in order. */
  private async send(): Promise<void> {
    const batch = this.outbox.slice(0, MAX_BATCH);
    for (const o of batch) o.sealed = true;
    let outcomes: (unknown | undefined)[];
    try {
      const res = await this.ctx.client.bulk({
        index: this.index,
        require_alias: true,
        operations: batch.flatMap((o) => [{ create: { _id: `${o.doc.writer}/${o.doc.feed}/${o.doc.seq}` } }, o.doc]),
      });
      outcomes = res.items.map((item) => {
        const r = item.create;
        // 409: stored already (a re-sent entry whose first bulk was acknowledged late).
        if (!r || (r.status >= 200 && r.status < 300) || r.status === 409) return undefined;
        return itemError(r.status, r.error);
      });
    } catch (err) {
      outcomes = batch.map(() => err);
    }
    const stored = new Set<Outgoing>();
    let failed = false;
    batch.forEach((o, k) => {
      const err = k < outcomes.length ? outcomes[k] : new Error('the bulk answered fewer items than it carried');
      if (err === undefined) stored.add(o);
      else failed = true;
      for (const w of o.waiters.splice(0)) {
        if (err === undefined) w.resolve();
        else w.reject(notAnnounced(err));
      }
    });
    this.outbox = this.outbox.filter((o) => !stored.has(o));
    this.sending = false;
    if ([...stored].some((o) => PROMPT_FEEDS.has(o.doc.feed))) {
      // A failed refresh costs only the wait for the scheduled one.
      visible(this.ctx, this.index).catch(() => undefined);
    }
    if (this.outbox.length === 0) {
      this.failures = 0;
      for (const d of this.drained.splice(0)) d();
      return;
    }
    if (!failed) {
      this.failures = 0;
      this.kick();
      return;
    }
    this.failures += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.kick(), Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** (this.failures - 1)));
    this.retryTimer.unref();
  }

  /** Every writer's head of every feed (a reader's starting position): one aggregation. */
  async heads(feeds: readonly string[]): Promise<FeedHead[]> {
    const res = await storeCall(() =>
      this.ctx.client.search(
        {
          index: this.index,
          size: 0,
          query: { terms: { feed: [...feeds] } },
          aggs: {
            writers: {
              terms: { field: 'writer', size: 10_000 },
              aggs: { feeds: { terms: { field: 'feed', size: 100 }, aggs: { seq: { max: { field: 'seq' } } } } },
            },
          },
        },
        readRetries,
      ),
    );
    type Buckets<B> = { buckets?: B[] } | undefined;
    const writers = (res.aggregations?.writers as Buckets<{ key: string; feeds: Buckets<{ key: string; seq: { value: number | null } }> }>)?.buckets ?? [];
    return writers.flatMap((w) => (w.feeds?.buckets ?? []).map((f) => ({ writer: w.key, feed: f.key, seq: f.seq.value ?? 0 })));
  }

  /** The entries after the reader's position, sorted by writer, feed and sequence, at most READ_LIMIT. */
  async read(q: FeedQuery): Promise<FeedEntry[]> {
    const followed = q.follow.map((w) => w.writer);
    const should: estypes.QueryDslQueryContainer[] = q.follow.map((w) => ({
      bool: {
        filter: [{ term: { writer: w.writer } }],
        should: q.feeds.map((feed) => ({
          bool: { filter: [{ term: { feed } }, { range: { seq: { gt: w.after[feed] ?? 0 } } }] },
        })),
        minimum_should_match: 1,
      },
    }));
    should.push({
      bool: {
        filter: [{ range: { at: { gte: q.othersSince } } }],
        ...(followed.length > 0 ? { must_not: [{ terms: { writer: followed } }] } : {}),
      },
    });
    const query: estypes.QueryDslQueryContainer = {
      bool: {
        filter: [{ terms: { feed: [...q.feeds] } }, { bool: { should, minimum_should_match: 1 } }],
        ...(q.exclude ? { must_not: [{ term: { writer: q.exclude } }] } : {}),
      },
    };
    const out: FeedEntry[] = [];
    let after: estypes.SortResults | undefined;
    while (out.length < READ_LIMIT) {
      const res = await storeCall(() =>
        this.ctx.client.search<FeedEntryDoc>(
          {
            index: this.index,
            size: PAGE,
            query,
            sort: [{ writer: 'asc' }, { feed: 'asc' }, { seq: 'asc' }],
            ...(after ? { search_after: after } : {}),
            track_total_hits: false,
          },
          readRetries,
        ),
      );
      const hits = res.hits.hits;
      for (const h of hits) {
        const d = h._source;
        if (d) out.push({ feed: d.feed, writer: d.writer, seq: d.seq, ids: d.ids, at: Date.parse(d.at) });
      }
      if (hits.length < PAGE) break;
      after = hits[hits.length - 1]?.sort;
    }
    return out;
  }

  rollover(conditions?: { maxAge: string; maxPrimaryShardSize: string }): Promise<boolean> {
    return this.generationsOf.rollover(conditions);
  }

  generations(): Promise<Generation[]> {
    return this.generationsOf.generations();
  }

  deleteGeneration(index: string): Promise<void> {
    return this.generationsOf.deleteGeneration(index);
  }
}

/** The answer of a request whose change is saved but not yet announced. */
function notAnnounced(err: unknown): AppError {
  const cause = translateStoreError(err);
  const why = cause instanceof Error ? cause.message : String(cause);
  return new ServiceUnavailableError(
    `the change is saved, but the other instances could not be told of it yet (${why}); they will be as soon as the store accepts it`,
    1,
  );
}
