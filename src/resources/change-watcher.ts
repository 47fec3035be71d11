/**
 * Keeps the per-instance caches (verified tokens, the organization tree) in step with changes
 * made through other instances: reads the change feed (src/store/change-feed.ts) every
 * `intervalMs` and tells each subscriber what changed. The request path never waits on it.
 * While the store is unreachable it logs once and keeps trying; the caches then fall back to
 * their own time limits (ECS_TOKEN_CACHE_SECONDS, ECS_ORG_CACHE_SECONDS). Design: docs/adr/0065.
 */
import type { Logger } from '../log.js';
import { Periodic } from '../periodic.js';
import type { ChangeFeedStore, FeedEntry, FeedHead, FeedName, FeedQuery } from '../store/change-feed.js';

export interface FeedSubscriber {
  feed: FeedName;
  /**
   * Called when the feed moved: the ids changed since the last poll, or undefined when they
   * are not known (the first poll, or this instance fell too far behind) and everything
   * cached must go. A throw leaves the feed unacknowledged: the next poll calls again with
   * undefined (everything), since the ids it was told are no longer kept.
   */
  onChange(ids: string[] | undefined): Promise<void> | void;
}

/**
 * How long a hole in a writer's sequence is waited for: an entry not yet searchable while a
 * later one is, or one its writer is still re-sending. Past this the reader assumes the entry
 * lost (its writer died before storing it) and reloads that feed.
 */
export const GAP_MS = 30_000;
/** A writer without entries for this long is no longer followed by name (it is found again as an "other" writer). */
export const DORMANT_MS = 10 * 60_000;
/** How far back "other" writers' entries are looked for: bounds the clock difference between instances. */
export const DISCOVERY_MS = 5 * 60_000;

interface Track {
  /** Every entry up to this sequence number has been seen. */
  seq: number;
  /** Entries seen beyond a hole. */
  above: Set<number>;
  /** Since when the hole is open. */
  holeSince?: number;
}

interface Writer {
  feeds: Map<string, Track>;
  lastActive: number;
}

/**
 * A reader's position in the feed: per writer and feed the sequence it has read up to. Pure
 * (no I/O, time passed in), so its rules are tested alone (test/unit/change-feed.test.ts).
 */
export class FeedPosition {
  private readonly writers = new Map<string, Writer>();
  /** When the oldest entry the last `take` delivered was written (epoch ms; undefined: none). */
  oldestTaken: number | undefined;

  constructor(
    private readonly feeds: readonly string[],
    heads: readonly FeedHead[],
    now: number,
  ) {
    for (const h of heads) this.track(h.writer, h.feed, now).seq = h.seq;
  }

  private track(writer: string, feed: string, now: number): Track {
    let w = this.writers.get(writer);
    if (!w) {
      w = { feeds: new Map(), lastActive: now };
      this.writers.set(writer, w);
    }
    let t = w.feeds.get(feed);
    if (!t) {
      t = { seq: 0, above: new Set() };
      w.feeds.set(feed, t);
    }
    return t;
  }

  /** The read that returns what this position has not seen. */
  query(now: number, exclude?: string): FeedQuery {
    const follow: FeedQuery['follow'] = [];
    for (const [writer, w] of this.writers) {
      const holes = [...w.feeds.values()].some((t) => t.above.size > 0);
      if (!holes && now - w.lastActive > DORMANT_MS) continue;
      follow.push({ writer, after: Object.fromEntries([...w.feeds].map(([f, t]) => [f, t.seq])) });
    }
    // Writers that started after this reader's heads (or woke from dormancy) are found among the others.
    return { feeds: this.feeds, follow, othersSince: now - DISCOVERY_MS, ...(exclude ? { exclude } : {}) };
  }

  /**
   * Takes what a read returned: per feed the ids not delivered before, or undefined when the
   * feed lost an entry (a hole open longer than GAP_MS). Feeds without news are absent.
   */
  take(entries: readonly FeedEntry[], now: number): Map<string, string[] | undefined> {
    const ids = new Map<string, Set<string>>();
    const lost = new Set<string>();
    this.oldestTaken = undefined;
    for (const e of entries) {
      if (!this.feeds.includes(e.feed)) continue;
      const t = this.track(e.writer, e.feed, now);
      if (e.seq <= t.seq || t.above.has(e.seq)) continue;
      (this.writers.get(e.writer) as Writer).lastActive = now;
      t.above.add(e.seq);
      this.oldestTaken = Math.min(this.oldestTaken ?? e.at, e.at);
      let set = ids.get(e.feed);
      if (!set) ids.set(e.feed, (set = new Set()));
      for (const id of e.ids) set.add(id);
    }
    for (const w of this.writers.values()) {
      for (const [feed, t] of w.feeds) {
        while (t.above.delete(t.seq + 1)) t.seq += 1;
        if (t.above.size === 0) {
          t.holeSince = undefined;
          continue;
        }
        t.holeSince ??= now;
        if (now - t.holeSince > GAP_MS) {
          t.seq = Math.max(...t.above);
          t.above.clear();
          t.holeSince = undefined;
          lost.add(feed);
        }
      }
    }
    const out = new Map<string, string[] | undefined>();
    for (const [feed, set] of ids) out.set(feed, [...set]);
    for (const feed of lost) out.set(feed, undefined);
    return out;
  }
}

export interface ChangeWatcherOptions {
  /** Called after each poll that left every subscriber in step with the feed (the caches may trust themselves longer). */
  onCurrent?: () => void;
}

export class ChangeWatcher {
  private position: FeedPosition | undefined;
  /** Feeds whose subscriber failed: told undefined (everything) on the next poll. */
  private readonly reload = new Set<string>();
  private readonly periodic: Periodic;
  private failing = false;
  /** The largest delay (ms) between an entry's writing and its delivery here since the last `takeMaxDelay`. */
  private maxDelayMs = 0;

  constructor(
    private readonly store: ChangeFeedStore,
    private readonly subscribers: readonly FeedSubscriber[],
    intervalMs: number,
    private readonly log: Logger,
    private readonly opts: ChangeWatcherOptions = {},
  ) {
    this.periodic = new Periodic('change feed poll', intervalMs, () => this.poll(), log);
  }

  /** Starts polling (idempotent). */
  start(): void {
    this.periodic.start();
  }

  /** Stops polling (a poll in progress ends when the store client closes; its result is harmless). */
  stop(): void {
    this.periodic.stop();
  }

  /** The largest feed delay seen since the last call, in ms (for /metrics), and resets it. */
  takeMaxDelay(): number {
    const d = this.maxDelayMs;
    this.maxDelayMs = 0;
    return d;
  }

  private get feeds(): string[] {
    return [...new Set(this.subscribers.map((s) => s.feed))];
  }

  /** One poll: reads what is new and notifies the subscribers of the feeds that moved. Never throws. */
  async poll(): Promise<void> {
    let changes: Map<string, string[] | undefined>;
    let written: number[];
    try {
      ({ changes, written } = await this.read());
    } catch (err) {
      if (!this.failing) {
        this.failing = true;
        this.log.warn({ err: { message: (err as Error).message } }, 'change feed unreadable; caches fall back to their time limits until it answers');
      }
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.log.info('change feed readable again');
    }
    for (const feed of this.reload) changes.set(feed, undefined);
    let current = true;
    for (const [feed, ids] of changes) {
      try {
        for (const s of this.subscribers) if (s.feed === feed) await s.onChange(ids);
        this.reload.delete(feed);
      } catch (err) {
        current = false;
        this.reload.add(feed);
        this.log.warn({ err: { message: (err as Error).message }, feed }, 'applying a change-feed update failed; reloading on the next poll');
      }
    }
    if (current) this.opts.onCurrent?.();
    const now = Date.now();
    for (const at of written) this.maxDelayMs = Math.max(this.maxDelayMs, now - at);
  }

  /** What changed since the last read, and when each change read was written (for the delay metric). */
  private async read(): Promise<{ changes: Map<string, string[] | undefined>; written: number[] }> {
    const now = Date.now();
    if (!this.position) {
      // The first read: from every writer's head on; what came before is unknown, so everything reloads.
      this.position = new FeedPosition(this.feeds, await this.store.heads(this.feeds), now);
      return { changes: new Map(this.feeds.map((f) => [f, undefined])), written: [] };
    }
    const entries = await this.store.read(this.position.query(now, this.store.writer));
    const at = Date.now();
    const changes = this.position.take(entries, at);
    return { changes, written: this.position.oldestTaken === undefined ? [] : [this.position.oldestTaken] };
  }
}
