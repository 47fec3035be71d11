/**
 * Organizations form a tree ({id, name, parentId?}); every 403 decision and every
 * includeChildren / direct-children / all-descendants query asks it. The tree is held in
 * memory (organizations change rarely, are asked about on every request) and reloaded
 * when older than `cacheSeconds` or when an unknown id is asked for (at most once a second).
 * Every write bumps the `organizations` change feed; each instance's ChangeWatcher then
 * reloads its tree (`reload`) within a poll interval.
 */
import type { OrgTree, Access } from '../../http/auth.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';

export interface Organization {
  id: string;
  name: string;
  parentId?: string;
  createdAt: string;
}

interface Snapshot {
  parent: Map<string, string | undefined>;
  children: Map<string, string[]>;
  loadedAt: number;
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

  constructor(
    private readonly store: OrganizationStore,
    private readonly cacheSeconds: number,
    private readonly feed: ChangeFeedStore,
  ) {}

  /** Reloads the tree with a read that starts now (an organization changed through another instance). */
  async reload(): Promise<void> {
    // A load already in flight may have read before the change: wait for it, then read again.
    await this.loading?.catch(() => undefined);
    await this.load();
  }

  private async load(): Promise<Snapshot> {
    this.loading ??= this.store
      .allLinks()
      .then((links) => {
        const parent = new Map<string, string | undefined>();
        const children = new Map<string, string[]>();
        for (const l of links) {
          parent.set(l.id, l.parentId);
          if (l.parentId) {
            const list = children.get(l.parentId) ?? [];
            list.push(l.id);
            children.set(l.parentId, list);
          }
        }
        this.snapshot = { parent, children, loadedAt: Date.now() };
        return this.snapshot;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async tree(): Promise<Snapshot> {
    const s = this.snapshot;
    if (s && Date.now() - s.loadedAt < this.cacheSeconds * 1000) return s;
    return this.load();
  }

  /**
   * The tree, reloaded if it does not know `id` and `id` exists (an org created through another
   * instance, before the change feed told this one). An unknown id costs one realtime get and no
   * reload, so ids that name nothing cannot make the instance rescan the organizations.
   */
  private async treeKnowing(id: string): Promise<Snapshot> {
    const s = await this.tree();
    if (s.parent.has(id) || !(await this.store.get(id))) return s;
    await this.reload();
    return this.snapshot ?? this.load();
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
    while (queue.length > 0) {
      const id = queue.shift() as string;
      out.push(id);
      queue.push(...(s.children.get(id) ?? []));
    }
    return out;
  }

  async subtree(orgId: string): Promise<string[]> {
    if (!(await this.exists(orgId))) return [orgId];
    return [orgId, ...(await this.descendants(orgId))];
  }

  /** Registers an organization; its parent must exist. */
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
    // Known here at once; other instances reload on the feed's bump. A load in flight may have read
    // before this write: let it land first, or it would replace the snapshot with one that lacks the org.
    await this.loading?.catch(() => undefined);
    if (this.snapshot) {
      this.snapshot.parent.set(doc.id, doc.parentId);
      if (doc.parentId) {
        const list = this.snapshot.children.get(doc.parentId) ?? [];
        list.push(doc.id);
        this.snapshot.children.set(doc.parentId, list);
      }
    }
    await this.feed.bump('organizations', [doc.id]);
    return toOrganization(doc);
  }

  /**
   * Renames and/or moves an organization. A move rewrites the ancestors of the whole subtree
   * (one bulk) and refuses a parent inside the subtree; concurrent changes of the same
   * organization answer 409.
   */
  async update(id: string, input: OrganizationUpdate): Promise<Organization> {
    const cur = await this.store.getStored(id);
    if (!cur) throw new NotFoundError(`organization ${id} not found`);
    const doc: OrganizationDoc = { ...cur.doc, ...(input.name !== undefined ? { name: input.name } : {}) };
    const moved = input.parentId !== undefined && input.parentId !== (cur.doc.parentId ?? null);
    if (moved) {
      let ancestors: string[] = [];
      delete doc.parentId;
      if (input.parentId) {
        const parent = await this.store.get(input.parentId);
        if (!parent) throw new NotFoundError(`parent organization ${input.parentId} not found`);
        if (parent.id === id || parent.ancestors.includes(id)) {
          throw new BadRequestError('body.parentId: an organization cannot be moved below itself');
        }
        ancestors = [...parent.ancestors, parent.id];
        doc.parentId = parent.id;
      }
      doc.ancestors = ancestors;
    }
    await this.store.replace(cur, doc);
    if (moved) {
      const below = await this.store.descendantsOf(id);
      await this.store.setAncestors(
        below.map((d) => ({ id: d.id, ancestors: [...doc.ancestors, id, ...d.ancestors.slice(d.ancestors.indexOf(id) + 1)] })),
      );
      await this.feed.bump('organizations', [id]);
      await this.reload();
    }
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
