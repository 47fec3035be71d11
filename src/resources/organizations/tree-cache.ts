/**
 * The organization tree held in memory (organizations change rarely, are asked about on every
 * request). This instance's own changes are applied to it in place; changes made elsewhere
 * arrive through the change feed (`applyChanged`: only the changed organizations are read). It
 * is read whole at first use, when the feed says changes were lost, and when neither a load nor
 * the feed has confirmed it for `cacheSeconds` (the feed unreadable). An unknown id that exists
 * (an organization created elsewhere, not yet announced) is read and added alone. Design:
 * docs/adr/0066.
 */
import type { OrgMove, OrgMoveStore } from './move-store.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';
import { emptySnapshot, type Snapshot } from './tree-snapshot.js';

export class OrgTreeCache {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  /** When the change feed last confirmed the tree in step (see `confirmCurrent`). */
  private confirmedAt = 0;

  constructor(
    private readonly store: OrganizationStore,
    private readonly cacheSeconds: number,
    private readonly moves: OrgMoveStore,
  ) {}

  /** Reloads the tree with a read that starts now (the feed lost changes, or at start). */
  async reload(): Promise<void> {
    // A load already in flight may have read before the change: wait for it, then read again.
    await this.loading?.catch(() => undefined);
    await this.load();
  }

  /** The change feed read every change up to now: the tree needs no time-based reload yet. */
  confirmCurrent(): void {
    this.confirmedAt = Date.now();
  }

  /**
   * Applies changes made through other instances: reads just these organizations and sets
   * (or removes) their links. A move changes only the moved organization's own parent link.
   */
  async applyChanged(ids: readonly string[]): Promise<void> {
    if (!this.snapshot && !this.loading) return;
    const [docs, move] = await Promise.all([this.store.getMany([...new Set(ids)]), this.moves.get()]);
    const s = await this.current();
    this.applyDocs(s, ids, docs);
    // A move started or ended elsewhere: reads start or stop compensating for it (docs/adr/0087).
    if (s) this.setMove(s, move?.doc);
  }

  private setMove(s: Snapshot, move: OrgMove | undefined): void {
    if (move?.state === 'RUNNING') s.move = move;
    else delete s.move;
  }

  /** The snapshot once any load in flight has landed (a load that read before a change must not replace its application). */
  async current(): Promise<Snapshot | undefined> {
    await this.loading?.catch(() => undefined);
    return this.snapshot;
  }

  private applyDocs(s: Snapshot | undefined, ids: readonly string[], docs: readonly OrganizationDoc[]): void {
    if (!s) return;
    const found = new Map(docs.map((d) => [d.id, d]));
    for (const id of ids) {
      const d = found.get(id);
      if (d) s.links.link(d.id, d.parentId);
      else s.links.unlink(id);
    }
  }

  /** Reads the whole tree (one read at a time: callers during a load share it). */
  async load(): Promise<Snapshot> {
    this.loading ??= Promise.all([this.store.allLinks(), this.moves.get()])
      .then(([links, move]) => {
        const s = emptySnapshot(Date.now());
        for (const l of links) s.links.link(l.id, l.parentId);
        this.setMove(s, move?.doc);
        this.snapshot = s;
        return s;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** The tree, read again when it is older than `cacheSeconds` and unconfirmed by the feed. */
  async tree(): Promise<Snapshot> {
    const s = this.snapshot;
    if (s && Date.now() - Math.max(s.loadedAt, this.confirmedAt) < this.cacheSeconds * 1000) return s;
    return this.load();
  }

  /**
   * The tree, knowing `id` if it exists (an org created through another instance, before the
   * change feed told this one): an unknown id costs one realtime get, and an existing one is
   * added with its ancestry (from its stored ancestors) without reading the tree again.
   */
  async treeKnowing(id: string): Promise<Snapshot> {
    const s = await this.tree();
    if (s.links.has(id)) return s;
    const doc = await this.store.get(id);
    if (!doc) return s;
    const cur = (await this.current()) ?? s;
    doc.ancestors.forEach((a, k) => {
      if (!cur.links.has(a)) cur.links.link(a, k > 0 ? doc.ancestors[k - 1] : undefined);
    });
    cur.links.link(doc.id, doc.parentId);
    return cur;
  }
}
