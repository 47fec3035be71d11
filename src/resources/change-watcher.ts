/**
 * Keeps the per-instance caches (verified tokens, the organization tree) in step with changes
 * made through other instances: polls the change feed (src/store/change-feed.ts) with one
 * realtime multi-get every `intervalMs` and tells each subscriber what changed. The request
 * path never waits on it. While the store is unreachable it logs once and keeps trying; the
 * caches then fall back to their own time limits (ECS_TOKEN_CACHE_SECONDS, ECS_ORG_CACHE_SECONDS).
 */
import type { Logger } from '../log.js';
import { MAX_RECENT, type ChangeFeedStore, type FeedName, type FeedState } from '../store/change-feed.js';

export interface FeedSubscriber {
  feed: FeedName;
  /**
   * Called when the feed moved: the ids changed since the last poll, or undefined when they
   * are not known (the first poll, or this instance fell too far behind) and everything
   * cached must go. A throw leaves the feed unacknowledged: the next poll calls again.
   */
  onChange(ids: string[] | undefined): Promise<void> | void;
}

/** The ids changed after revision `seen`, or undefined when the feed no longer holds them all. */
export function changedSince(state: FeedState, seen: number): string[] | undefined {
  const { recent } = state;
  // The list only loses entries once it is full; then it is complete iff it still reaches back to `seen`.
  if (recent.length >= MAX_RECENT && (recent[0]?.rev ?? Infinity) > seen) return undefined;
  return [...new Set(recent.filter((e) => e.rev > seen).map((e) => e.id))];
}

export class ChangeWatcher {
  private readonly seen = new Map<FeedName, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private failing = false;

  constructor(
    private readonly store: ChangeFeedStore,
    private readonly subscribers: readonly FeedSubscriber[],
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /** Starts polling (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops polling (a poll in progress ends when the store client closes; its result is harmless). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.poll().finally(() => this.schedule(this.intervalMs));
    }, ms);
    this.timer.unref();
  }

  /** One poll: reads the feeds and notifies the subscribers of those that moved. Never throws. */
  async poll(): Promise<void> {
    let states: Map<FeedName, FeedState>;
    try {
      states = await this.store.read([...new Set(this.subscribers.map((s) => s.feed))]);
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
    for (const [feed, state] of states) {
      const seen = this.seen.get(feed);
      if (seen === state.rev) continue;
      const ids = seen === undefined || state.rev < seen ? undefined : changedSince(state, seen);
      try {
        for (const s of this.subscribers) if (s.feed === feed) await s.onChange(ids);
        this.seen.set(feed, state.rev);
      } catch (err) {
        this.log.warn({ err: { message: (err as Error).message }, feed }, 'applying a change-feed update failed; retrying on the next poll');
      }
    }
  }
}
