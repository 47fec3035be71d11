/**
 * Organizations form a tree ({id, name, parentId?}); every 403 decision and every
 * includeChildren / direct-children / all-descendants query asks it. The tree is held in
 * memory (organizations change rarely, are asked about on every request). This instance's own
 * changes are applied to it in place; changes made elsewhere arrive through the change feed
 * (`applyChanged`: only the changed organizations are read). It is read whole at first use,
 * when the feed says changes were lost, and when neither a load nor the feed has confirmed it
 * for `cacheSeconds` (the feed unreadable). An unknown id that exists (an organization created
 * elsewhere, not yet announced) is read and added alone. Design: docs/adr/0066.
 */
import type { OrgTree, Access } from '../../http/auth.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { readModifyWrite } from '../../store/optimistic.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';

export interface Organization {
  id: string;
  name: string;
  parentId?: string;
  createdAt: string;
}

interface Snapshot {
  parent: Map<string, string | undefined>;
  children: Map<string, Set<string>>;
  loadedAt: number;
}

/** Sets `id`'s parent in the snapshot (adding or moving it); idempotent. */
function link(s: Snapshot, id: string, parentId: string | undefined): void {
  const had = s.parent.has(id);
  const old = s.parent.get(id);
  if (had && old === parentId) return;
  if (old !== undefined) s.children.get(old)?.delete(id);
  s.parent.set(id, parentId);
  if (parentId === undefined) return;
  let set = s.children.get(parentId);
  if (!set) s.children.set(parentId, (set = new Set()));
  set.add(id);
}

/** Removes `id` from the snapshot (its children keep their parent link). */
function unlink(s: Snapshot, id: string): void {
  if (!s.parent.has(id)) return;
  const old = s.parent.get(id);
  if (old !== undefined) s.children.get(old)?.delete(id);
  s.parent.delete(id);
}

export interface OrganizationUpdate {
  name?: string;
  /** The new parent; null makes the organization a root. */
  parentId?: string | null;
}

export function toOrganization(d: OrganizationDoc): Organization {
  return { id: d.id, name: d.name, ...(d.parentId ? { parentId: d.parentId } : {}), createdAt: d.createdAt };
}

export class OrganizationService implements OrgTree {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  /** When the change feed last confirmed the tree in step (see `confirmCurrent`). */
  private confirmedAt = 0;

  constructor(
    private readonly store: OrganizationStore,
    private readonly cacheSeconds: number,
    private readonly feed: ChangeFeedStore,
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
    const docs = await this.store.getMany([...new Set(ids)]);
    this.applyDocs(await this.current(), ids, docs);
  }

  /** The snapshot once any load in flight has landed (a load that read before a change must not replace its application). */
  private async current(): Promise<Snapshot | undefined> {
    await this.loading?.catch(() => undefined);
    return this.snapshot;
  }

  private applyDocs(s: Snapshot | undefined, ids: readonly string[], docs: readonly OrganizationDoc[]): void {
    if (!s) return;
    const found = new Map(docs.map((d) => [d.id, d]));
    for (const id of ids) {
      const d = found.get(id);
      if (d) link(s, d.id, d.parentId);
      else unlink(s, id);
    }
  }

  private async load(): Promise<Snapshot> {
    this.loading ??= this.store
      .allLinks()
      .then((links) => {
        const s: Snapshot = { parent: new Map(), children: new Map(), loadedAt: Date.now() };
        for (const l of links) link(s, l.id, l.parentId);
        this.snapshot = s;
        return s;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async tree(): Promise<Snapshot> {
    const s = this.snapshot;
    if (s && Date.now() - Math.max(s.loadedAt, this.confirmedAt) < this.cacheSeconds * 1000) return s;
    return this.load();
  }

  /**
   * The tree, knowing `id` if it exists (an org created through another instance, before the
   * change feed told this one): an unknown id costs one realtime get, and an existing one is
   * added with its ancestry (from its stored ancestors) without reading the tree again.
   */
  private async treeKnowing(id: string): Promise<Snapshot> {
    const s = await this.tree();
    if (s.parent.has(id)) return s;
    const doc = await this.store.get(id);
    if (!doc) return s;
    const cur = (await this.current()) ?? s;
    doc.ancestors.forEach((a, k) => {
      if (!cur.parent.has(a)) link(cur, a, k > 0 ? doc.ancestors[k - 1] : undefined);
    });
    link(cur, doc.id, doc.parentId);
    return cur;
  }

  async exists(orgId: string): Promise<boolean> {
    return (await this.treeKnowing(orgId)).parent.has(orgId);
  }

  async assertExists(orgId: string): Promise<void> {
    if (!(await this.exists(orgId))) throw new NotFoundError(`organization ${orgId} not found`);
  }

  async isWithin(orgId: string, rootId: string): Promise<boolean> {
    const s = await this.treeKnowing(orgId);
    let cur: string | undefined = orgId;
    for (let depth = 0; cur !== undefined && depth < 10_000; depth++) {
      if (cur === rootId) return true;
      if (!s.parent.has(cur)) return false;
      cur = s.parent.get(cur);
    }
    return false;
  }

  /** The org's direct child organizations. */
  async children(orgId: string): Promise<string[]> {
    return [...((await this.treeKnowing(orgId)).children.get(orgId) ?? [])];
  }

  /** Every organization strictly below the org. */
  async descendants(orgId: string): Promise<string[]> {
    const s = await this.treeKnowing(orgId);
    const out: string[] = [];
    const queue = [...(s.children.get(orgId) ?? [])];
    for (let k = 0; k < queue.length; k++) {
      const id = queue[k] as string;
      out.push(id);
      for (const c of s.children.get(id) ?? []) queue.push(c);
    }
    return out;
  }

  async subtree(orgId: string): Promise<string[]> {
    if (!(await this.exists(orgId))) return [orgId];
    return [orgId, ...(await this.descendants(orgId))];
  }

  /**
   * Registers an organization; its parent must exist. 409 only when the id is taken. Answered
   * once the change is announced on the feed; when the feed write fails the organization is
   * saved and still announced (the feed's outbox), and the answer is 503.
   */
  async create(input: { id: string; name: string; parentId?: string }, access: Access): Promise<Organization> {
    let ancestors: string[] = [];
    if (input.parentId) {
      const parent = await this.store.get(input.parentId);
      if (!parent) throw new NotFoundError(`parent organization ${input.parentId} not found`);
      ancestors = [...parent.ancestors, parent.id];
    }
    const doc: OrganizationDoc = {
      id: input.id,
      name: input.name,
      ...(input.parentId ? { parentId: input.parentId } : {}),
      ancestors,
      createdAt: new Date().toISOString(),
      createdBy: access.userKey,
    };
    try {
      await this.store.create(doc);
    } catch (err) {
      if (err instanceof ConflictError) throw new ConflictError(`organization ${input.id} already exists`);
      throw err;
    }
    // Known here at once; other instances learn it from the feed.
    const s = await this.current();
    if (s) link(s, doc.id, doc.parentId);
    await this.feed.append('organizations', [doc.id]);
    return toOrganization(doc);
  }

  /**
   * Renames and/or moves an organization. A move rewrites the ancestors of the whole subtree
   * (one bulk) and refuses a parent inside the subtree. The caller sends no version, so a
   * concurrent change of the same organization is re-read and applied again, never a 409.
   */
  async update(id: string, input: OrganizationUpdate): Promise<Organization> {
    const { doc, moved } = await readModifyWrite(async () => {
      const cur = await this.store.getStored(id);
      if (!cur) throw new NotFoundError(`organization ${id} not found`);
      const next: OrganizationDoc = { ...cur.doc, ...(input.name !== undefined ? { name: input.name } : {}) };
      const isMove = input.parentId !== undefined && input.parentId !== (cur.doc.parentId ?? null);
      if (isMove) {
        let ancestors: string[] = [];
        delete next.parentId;
        if (input.parentId) {
          const parent = await this.store.get(input.parentId);
          if (!parent) throw new NotFoundError(`parent organization ${input.parentId} not found`);
          if (parent.id === id || parent.ancestors.includes(id)) {
            throw new BadRequestError('body.parentId: an organization cannot be moved below itself');
          }
          ancestors = [...parent.ancestors, parent.id];
          next.parentId = parent.id;
        }
        next.ancestors = ancestors;
      }
      await this.store.replace(cur, next);
      return { doc: next, moved: isMove };
    });
    if (moved) {
      const below = await this.store.descendantsOf(id);
      await this.store.setAncestors(
        below.map((d) => ({ id: d.id, ancestors: [...doc.ancestors, id, ...d.ancestors.slice(d.ancestors.indexOf(id) + 1)] })),
      );
      const s = await this.current();
      if (s) link(s, id, doc.parentId);
    }
    await this.feed.append('organizations', [id]);
    return toOrganization(doc);
  }

  /** The organizations the caller sees (its subtree; every one for a system token), at most `limit`. */
  async visibleTree(access: Access, limit: number): Promise<{ organizations: Organization[]; truncated: boolean }> {
    const docs = await this.store.list(await access.visibleOrgs(), limit + 1);
    return { organizations: docs.slice(0, limit).map(toOrganization), truncated: docs.length > limit };
  }

  async get(id: string, access: Access): Promise<Organization> {
    const doc = await this.store.get(id);
    if (!doc) throw new NotFoundError(`organization ${id} not found`);
    await access.assertOrg(id);
    return toOrganization(doc);
  }
}
