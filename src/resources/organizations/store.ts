/**
 * The organizations index: the only code that touches it. A create does not wait for a refresh
 * (onboarding creates thousands at once, and a refresh per create is most of their cost): the
 * reads that follow one are realtime gets, and the few searches of this index (a move's subtree,
 * the whole tree's load, the system token's tree listing) first wait for one shared refresh of
 * it, so they see every create acknowledged before them (docs/adr/0066).
 */
import { DocStore, type Stored } from '../../store/doc-store.js';
import { itemError } from '../../store/item-errors.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../domain.js';
import { conditionOn } from '../../store/doc-types.js';

/** Organizations per bulk when a move rewrites the ancestors below it. */
const SET_ANCESTORS_BATCH = 5000;

export interface OrganizationDoc {
  id: string;
  name: string;
  parentId?: string;
  /** Ids from the root down to the parent: a subtree query is one term on this field. */
  ancestors: string[];
  createdAt: string;
  createdBy: UserKey;
}

export class OrganizationStore {
  private readonly docs: DocStore<OrganizationDoc>;
  constructor(ctx: StoreContext) {
    // Concurrent gets (creates under one parent read it each) travel in one realtime multi-get.
    this.docs = new DocStore<OrganizationDoc>(ctx, 'organizations', 'organization', { reads: { maxBatch: 200, maxInFlight: 2 } });
  }

  /** Realtime get by id. */
  get(id: string): Promise<OrganizationDoc | undefined> {
    return this.docs.get(id).then((h) => h?.doc);
  }

  /** Realtime multi-get; absent ids are skipped. */
  async getMany(ids: string[]): Promise<OrganizationDoc[]> {
    return (await this.docs.getMany(ids)).map((h) => h.doc);
  }

  /** Realtime get by id, with the version a conditional write needs. */
  getStored(id: string): Promise<Stored<OrganizationDoc> | undefined> {
    return this.docs.get(id);
  }

  /** Rewrites an organization if it is unchanged since `cur` was read (409 otherwise). */
  async replace(cur: Stored<OrganizationDoc>, doc: OrganizationDoc): Promise<void> {
    await this.docs.put(doc.id, doc, conditionOn(cur));
  }

  /** Every organization below `id` (its id is in their ancestors), streamed. */
  async descendantsOf(id: string): Promise<OrganizationDoc[]> {
    await this.docs.visible();
    return (await this.docs.all({ term: { ancestors: id } })).map((h) => h.doc);
  }

  /** Sets the ancestors of several organizations (after a move), in bulks of a few thousand. */
  async setAncestors(updates: { id: string; ancestors: string[] }[]): Promise<void> {
    for (let i = 0; i < updates.length; i += SET_ANCESTORS_BATCH) {
      const chunk = updates.slice(i, i + SET_ANCESTORS_BATCH);
      const last = i + SET_ANCESTORS_BATCH >= updates.length;
      const res = await this.docs.bulk(
        chunk.flatMap((u) => [{ update: { _id: u.id, retry_on_conflict: 10 } }, { doc: { ancestors: u.ancestors } }]),
        last ? {} : { refresh: false },
      );
      if (!res.errors) continue;
      const failed = res.items.map((it) => it.update).find((r) => r?.error);
      throw itemError(failed?.status ?? 500, failed?.error);
    }
  }

  /** Create-only; 409 when the id exists. Not waiting for a refresh (see above). */
  async create(doc: OrganizationDoc): Promise<OrganizationDoc> {
    await this.docs.create(doc.id, doc, { refresh: false });
    return doc;
  }

  /** The organization `root` and every one below it (every organization when `root` is undefined), at most `limit`. */
  async listSubtree(root: string | undefined, limit: number): Promise<OrganizationDoc[]> {
    await this.docs.visible();
    const query = root === undefined ? { match_all: {} } : { bool: { should: [{ term: { id: root } }, { term: { ancestors: root } }], minimum_should_match: 1 } };
    return (await this.docs.all(query, { limit })).map((h) => h.doc);
  }

  /** Every organization's id and parent, streamed (for the in-memory tree). */
  async allLinks(): Promise<{ id: string; parentId?: string }[]> {
    await this.docs.visible();
    const out: { id: string; parentId?: string }[] = [];
    // Only the link: names and ancestor lists are most of each document and the tree needs neither.
    for await (const batch of this.docs.scan({ match_all: {} }, { batchSize: 10_000, source: ['id', 'parentId'] })) {
      for (const h of batch) out.push({ id: h.doc.id, parentId: h.doc.parentId });
    }
    return out;
  }
}
