/**
 * The change feed: one small document per feed (`tokens`, `organizations`) in the `control`
 * index, read by every instance with one realtime multi-get a few times a second, so a change
 * made through one instance reaches the caches of every other within a second.
 *
 * A feed document holds a revision counter and the ids changed at the most recent revisions.
 * The zip distribution has no scripting, so a bump is a read followed by a write conditional
 * on the read's seq_no (create-only when the document does not exist yet), retried on conflict.
 */
import { DocStore } from './doc-store.js';
import type { StoreContext } from './client.js';
import { ConflictError } from '../errors.js';

export type FeedName = 'tokens' | 'organizations';

export interface FeedEntry {
  id: string;
  rev: number;
}

export interface FeedDoc {
  kind: 'feed';
  rev: number;
  /** The ids changed at the last revisions (oldest first), at most `MAX_RECENT`. */
  recent: FeedEntry[];
  changedAt: string;
}

/** What a poll sees of one feed. */
export interface FeedState {
  rev: number;
  recent: FeedEntry[];
}

/** Entries kept per feed; a reader that fell further behind drops its whole cache instead. */
export const MAX_RECENT = 500;
const BUMP_ATTEMPTS = 20;

export class ChangeFeedStore {
  private readonly docs: DocStore<FeedDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<FeedDoc>(ctx, 'control', 'change feed');
  }

  /**
   * Advances a feed by one revision, recording `ids` (none: "something changed, reload").
   * Not refreshed: readers use realtime gets.
   */
  async bump(feed: FeedName, ids: string[] = []): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const cur = await this.docs.get(feed);
      const rev = (cur?.doc.rev ?? 0) + 1;
      const recent = [...(cur?.doc.recent ?? []), ...ids.map((id) => ({ id, rev }))].slice(-MAX_RECENT);
      const doc: FeedDoc = { kind: 'feed', rev, recent, changedAt: new Date().toISOString() };
      try {
        if (cur) await this.docs.put(feed, doc, { refresh: false, if_seq_no: cur.seqNo, if_primary_term: cur.primaryTerm });
        else await this.docs.create(feed, doc, { refresh: false });
        return rev;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= BUMP_ATTEMPTS) throw err;
      }
    }
  }

  /** One realtime multi-get of the feeds; an absent feed is at revision 0. */
  async read(feeds: readonly FeedName[]): Promise<Map<FeedName, FeedState>> {
    const hits = await this.docs.getMany([...feeds]);
    const out = new Map<FeedName, FeedState>(feeds.map((f) => [f, { rev: 0, recent: [] }]));
    for (const h of hits) out.set(h.id as FeedName, { rev: h.doc.rev, recent: h.doc.recent });
    return out;
  }
}
