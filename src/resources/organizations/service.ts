/**
 * Organizations form a tree ({id, name, parentId?}); every 403 decision and every
 * includeChildren / direct-children / all-descendants query asks it. The tree is held in memory
 * (tree-cache.ts, docs/adr/0066) and queried there (tree-snapshot.ts); this service registers,
 * renames and moves organizations, and a move's lifecycle is moves.ts.
 *
 * The tree also answers the ancestry stamped on org-scoped records (`pathOf`, docs/adr/0085) and
 * the one-term subtree queries over it (`subtreeQuery`); a move rewrites that ancestry in the
 * background (move-task.ts, docs/adr/0086) while reads compensate for it (docs/adr/0087).
 */
import type { OrgTree, Access } from '../../access/access.js';
import { BadRequestError, ConflictError, NotFoundError, WriteConflictError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { readModifyWrite } from '../../store/optimistic.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';
import type { Query } from '../../store/doc-store.js';
import type { OrgAncestry } from '../../store/org-path.js';
import type { OrgMove, OrgMoveStore } from './move-store.js';
import type { OrgMoveTask } from './move-task.js';
import { OrgMoves, type OrganizationMoveStatus } from './moves.js';
import { OrgTreeCache } from './tree-cache.js';
import { subtreeQuery } from './tree-snapshot.js';

export type { OrganizationMoveStatus };

export interface Organization {
  id: string;
  name: string;
  parentId?: string;
  createdAt: string;
}

export interface OrganizationUpdate {
  name?: string;
  /** The new parent; null makes the organization a root. */
  parentId?: string | null;
}

export function toOrganization(d: OrganizationDoc): Organization {
  return { id: d.id, name: d.name, ...(d.parentId ? { parentId: d.parentId } : {}), createdAt: d.createdAt };
}

export class OrganizationService implements OrgTree, OrgAncestry {
  private readonly cache: OrgTreeCache;
  private readonly moves: OrgMoves;

  constructor(
    private readonly store: OrganizationStore,
    cacheSeconds: number,
    private readonly feed: ChangeFeedStore,
    moveStore: OrgMoveStore,
  ) {
    this.cache = new OrgTreeCache(store, cacheSeconds, moveStore);
    this.moves = new OrgMoves(this.cache, feed, moveStore);
  }

  /** The task rewriting records after a move (set by the resource's builder). */
  get moveTask(): OrgMoveTask | undefined {
    return this.moves.task;
  }

  set moveTask(task: OrgMoveTask | undefined) {
    this.moves.task = task;
  }

  /** Reloads the tree with a read that starts now (the feed lost changes, or at start). */
  reload(): Promise<void> {
    return this.cache.reload();
  }

  /** The change feed read every change up to now: the tree needs no time-based reload yet. */
  confirmCurrent(): void {
    this.cache.confirmCurrent();
  }

  /** Applies changes made through other instances (only these organizations are read). */
  applyChanged(ids: readonly string[]): Promise<void> {
    return this.cache.applyChanged(ids);
  }

  async exists(orgId: string): Promise<boolean> {
    return (await this.cache.treeKnowing(orgId)).links.has(orgId);
  }

  async assertExists(orgId: string): Promise<void> {
    if (!(await this.exists(orgId))) throw new NotFoundError(`organization ${orgId} not found`);
  }

  async isWithin(orgId: string, rootId: string): Promise<boolean> {
    return (await this.cache.treeKnowing(orgId)).links.isWithin(orgId, rootId);
  }

  /** The org's direct child organizations. */
  async children(orgId: string): Promise<string[]> {
    return (await this.cache.treeKnowing(orgId)).links.childrenOf(orgId);
  }

  /** Every organization strictly below the org. */
  async descendants(orgId: string): Promise<string[]> {
    return (await this.cache.treeKnowing(orgId)).links.descendants(orgId);
  }

  async subtree(orgId: string): Promise<string[]> {
    if (!(await this.exists(orgId))) return [orgId];
    return [orgId, ...(await this.descendants(orgId))];
  }

  /** Ids from the org's root down to the org (an org the tree does not know: itself alone). */
  async pathOf(orgId: string): Promise<string[]> {
    return (await this.cache.treeKnowing(orgId)).links.pathOf(orgId);
  }

  /** The records of the org's subtree: one term on the ancestry, one more while a move rewrites records (tree-snapshot.ts). */
  async subtreeQuery(orgId: string, orgField: string): Promise<Query> {
    return subtreeQuery((await this.cache.tree()).move, orgId, orgField);
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
    const s = await this.cache.current();
    s?.links.link(doc.id, doc.parentId);
    await this.feed.append('organizations', [doc.id]);
    return toOrganization(doc);
  }

  /** The ancestors organization `id` has below `parentId` (none at the top); 404 for a missing parent, 400 for one inside its subtree. */
  private async placeBelow(id: string, parentId: string | null): Promise<string[]> {
    if (!parentId) return [];
    const parent = await this.store.get(parentId);
    if (!parent) throw new NotFoundError(`parent organization ${parentId} not found`);
    if (parent.id === id || parent.ancestors.includes(id)) {
      throw new BadRequestError('body.parentId: an organization cannot be moved below itself');
    }
    return [...parent.ancestors, parent.id];
  }

  /**
   * Renames and/or moves an organization. A move rewrites the ancestors of the organizations below
   * it at once and the ancestry of the records below it in the background (move-task.ts; progress:
   * `moveStatus`); it refuses a parent inside the subtree, and waits for (then 409) another move
   * still rewriting records. The caller sends no version, so a concurrent change of the same
   * organization is re-read and applied again.
   */
  async update(id: string, input: OrganizationUpdate): Promise<Organization> {
    let move: OrgMove | undefined;
    /**
     * Ends the record of a move that moved nothing, so the next move (this one's retry too) is not
     * refused. Every attempt that fails ends its move, so each attempt begins its own.
     */
    const abandon = async (): Promise<void> => {
      if (move) await this.moves.abandon(move);
      move = undefined;
    };
    const { doc, moved } = await readModifyWrite(async () => {
      const cur = await this.store.getStored(id);
      if (!cur) throw new NotFoundError(`organization ${id} not found`);
      const next: OrganizationDoc = { ...cur.doc, ...(input.name !== undefined ? { name: input.name } : {}) };
      const isMove = input.parentId !== undefined && input.parentId !== (cur.doc.parentId ?? null);
      if (isMove) {
        const parentId = input.parentId ?? null;
        const ancestors = await this.placeBelow(id, parentId);
        delete next.parentId;
        if (parentId) next.parentId = parentId;
        next.ancestors = ancestors;
        move = await this.moves.begin({ orgId: id, from: cur.doc.ancestors, to: ancestors });
        // Moves run one at a time (the move record), but the place was read before this one's
        // turn: a move that ended while this one waited may have put the new parent below this
        // organization (two crossing moves would make a cycle), so it is read again now that no
        // other move can change it (docs/adr/0137-organization-moves-checked-in-their-turn.md).
        const settled = await this.placeBelow(id, parentId).catch(async (err: unknown) => {
          await abandon();
          throw err;
        });
        if (settled.join('/') !== ancestors.join('/')) {
          await abandon();
          throw new WriteConflictError(`the new parent of organization ${id} moved while this move waited`);
        }
      }
      try {
        await this.store.replace(cur, next);
      } catch (err) {
        // Nothing moved: the record of the move ends at once; a retry after a conflict begins anew
        // from what it reads then (the organization itself may have moved with its parent).
        await abandon();
        throw err;
      }
      return { doc: next, moved: isMove };
    });
    if (moved) {
      const below = await this.store.descendantsOf(id);
      await this.store.setAncestors(
        below.map((d) => ({ id: d.id, ancestors: [...doc.ancestors, id, ...d.ancestors.slice(d.ancestors.indexOf(id) + 1)] })),
      );
      const s = await this.cache.current();
      if (s) {
        s.links.link(id, doc.parentId);
        if (move) s.move = move;
      }
    }
    await this.feed.append('organizations', [id]);
    if (moved && move) this.moves.start(move);
    return toOrganization(doc);
  }

  /** Resumes the rewrite of a move left RUNNING (its instance stopped); at start-up. */
  resumeMove(): Promise<void> {
    return this.moves.resume();
  }

  /** Where the last move of organization `id` stands; 404 when its last move is not the last one recorded. */
  moveStatus(id: string): Promise<OrganizationMoveStatus> {
    return this.moves.status(id);
  }

  /** The move is done: this instance drops its compensation at once, every other one on the feed's change. */
  moveDone(orgId: string): Promise<void> {
    return this.moves.done(orgId);
  }

  /** The organizations the caller sees (its subtree; every one for a system token), at most `limit`. */
  async visibleTree(access: Access, limit: number): Promise<{ organizations: Organization[]; truncated: boolean }> {
    const roots = access.grantRoots;
    // A person's grants may nest (admin of an MSP, reader of one of its customers): each organization once.
    const lists = roots === undefined ? [await this.store.listSubtree(undefined, limit + 1)] : await Promise.all(roots.map((r) => this.store.listSubtree(r, limit + 1)));
    const docs = [...new Map(lists.flat().map((d) => [d.id, d])).values()];
    return { organizations: docs.slice(0, limit).map(toOrganization), truncated: docs.length > limit };
  }

  async get(id: string, access: Access): Promise<Organization> {
    const doc = await this.store.get(id);
    if (!doc) throw new NotFoundError(`organization ${id} not found`);
    await access.assertOrg(id);
    return toOrganization(doc);
  }
}
