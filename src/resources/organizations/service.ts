/**
 * Organizations form a tree ({id, name, parentId?}); every 403 decision and every
 * includeChildren / direct-children / all-descendants query asks it. The tree is held in
 * memory (organizations change rarely, are asked about on every request) and reloaded
 * when older than `cacheSeconds` or when an unknown id is asked for (at most once a second).
 * Every write bumps the `organizations` change feed; each instance's ChangeWatcher then
 * reloads its tree (`reload`) within a poll interval.
 *
 * The tree also answers the ancestry stamped on org-scoped records (`pathOf`, docs/adr/0085) and
 * the one-term subtree queries over it (`subtreeQuery`); a move rewrites that ancestry in the
 * background (move-task.ts, docs/adr/0086) while reads compensate for it (docs/adr/0087).
 */
import type { OrgTree, Access } from '../../http/auth.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { Query } from '../../store/doc-store.js';
import type { OrgAncestry } from '../../store/org-path.js';
import { pathFieldOf } from '../../store/org-path.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';
import type { OrgMove, OrgMoveStore } from './move-store.js';
import type { OrgMoveTask } from './move-task.js';

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
  /** The move whose records are being rewritten, if one is (reads compensate for it). */
  move?: OrgMove;
}

/** How a move's progress reads (GET /admin/organizations/{id}/move). */
export interface OrganizationMoveStatus {
  orgId: string;
  fromParentId?: string;
  toParentId?: string;
  state: OrgMove['state'];
  recordsRewritten: number;
  /** Records still showing the old place (counted now; 0 when done). */
  recordsRemaining: number;
  startedAt: string;
  finishedAt?: string;
}

export interface OrganizationUpdate {
  name?: string;
  /** The new parent; null makes the organization a root. */
  parentId?: string | null;
}

/** How long a move waits for another one still rewriting records before it answers 409. */
const MOVE_WAIT_MS = 10_000;

export function toOrganization(d: OrganizationDoc): Organization {
  return { id: d.id, name: d.name, ...(d.parentId ? { parentId: d.parentId } : {}), createdAt: d.createdAt };
}

export class OrganizationService implements OrgTree, OrgAncestry {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  /** The task rewriting records after a move (set by the container; without it moves answer 503). */
  moveTask?: OrgMoveTask;

  constructor(
    private readonly store: OrganizationStore,
    private readonly cacheSeconds: number,
    private readonly feed: ChangeFeedStore,
    private readonly moves: OrgMoveStore,
  ) {}

  /** Reloads the tree with a read that starts now (an organization changed through another instance). */
  async reload(): Promise<void> {
    // A load already in flight may have read before the change: wait for it, then read again.
    await this.loading?.catch(() => undefined);
    await this.load();
  }

  private async load(): Promise<Snapshot> {
    this.loading ??= Promise.all([this.store.allLinks(), this.moves.get()])
      .then(([links, move]) => {
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
        this.snapshot = { parent, children, loadedAt: Date.now(), ...(move?.doc.state === 'RUNNING' ? { move: move.doc } : {}) };
        return this.snapshot;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async tree(): Promise<Snapshot> {
    const s = this.snapshot;
    if (s && Date.now() - s.loadedAt < this.cacheSeconds * 1000) return s;
    // An aged tree is reloaded in the background, not on the request that noticed: a reload of
    // 100,000 organizations takes seconds (bench/results/2026-11-26T09-30-05-org-tree-before.json).
    if (s && this.cacheSeconds > 0) {
      void this.load().catch(() => undefined);
      return s;
    }
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
    // Breadth-first with a read position: shifting the queue would make a 100,000-organization subtree quadratic.
    const out: string[] = [...(s.children.get(orgId) ?? [])];
    for (let i = 0; i < out.length; i++) {
      const below = s.children.get(out[i]);
      if (below) for (const id of below) out.push(id);
    }
    return out;
  }

  async subtree(orgId: string): Promise<string[]> {
    if (!(await this.exists(orgId))) return [orgId];
    return [orgId, ...(await this.descendants(orgId))];
  }

  /** Ids from the org's root down to the org (an org the tree does not know: itself alone). */
  async pathOf(orgId: string): Promise<string[]> {
    const s = await this.treeKnowing(orgId);
    const path: string[] = [];
    let cur: string | undefined = orgId;
    while (cur !== undefined && path.length < 10_000) {
      path.push(cur);
      cur = s.parent.get(cur);
    }
    return path.reverse();
  }

  /**
   * The records of the org's subtree: one term on the ancestry. While a move is rewriting records
   * (docs/adr/0087), a subtree the moved organization joined also matches its records by their
   * moved organization's id, and a subtree it left excludes them: one more term, exact whatever
   * the rewrite has reached, since every record below the moved organization holds its id.
   */
  async subtreeQuery(orgId: string, orgField: string): Promise<Query> {
    const path = pathFieldOf(orgField);
    const base: Query = { term: { [path]: orgId } };
    const move = (await this.tree()).move;
    if (!move) return base;
    const joined = move.to.includes(orgId) && !move.from.includes(orgId);
    const left = move.from.includes(orgId) && !move.to.includes(orgId);
    const moved: Query = { term: { [path]: move.orgId } };
    if (joined) return { bool: { should: [base, moved], minimum_should_match: 1 } };
    if (left) return { bool: { filter: [base], must_not: [moved] } };
    return base;
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
   * Renames and/or moves an organization. A move rewrites the ancestors of the organizations below
   * it at once and the ancestry of the records below it in the background (move-task.ts; its
   * progress: `moveStatus`); it refuses a parent inside the subtree, and answers 409 while another
   * move is still rewriting records or the organization changed concurrently.
   */
  async update(id: string, input: OrganizationUpdate): Promise<Organization> {
    const cur = await this.store.getStored(id);
    if (!cur) throw new NotFoundError(`organization ${id} not found`);
    const doc: OrganizationDoc = { ...cur.doc, ...(input.name !== undefined ? { name: input.name } : {}) };
    const moved = input.parentId !== undefined && input.parentId !== (cur.doc.parentId ?? null);
    if (!moved) {
      await this.store.replace(cur, doc);
      return toOrganization(doc);
    }
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
    const move = await this.beginMove({ orgId: id, from: cur.doc.ancestors, to: ancestors });
    try {
      await this.store.replace(cur, doc);
    } catch (err) {
      // Nothing moved: the record of the move ends at once, so the next move is not refused.
      await this.moves.save({ ...move, state: 'DONE', finishedAt: new Date().toISOString() });
      throw err;
    }
    const below = await this.store.descendantsOf(id);
    await this.store.setAncestors(
      below.map((d) => ({ id: d.id, ancestors: [...doc.ancestors, id, ...d.ancestors.slice(d.ancestors.indexOf(id) + 1)] })),
    );
    await this.feed.bump('organizations', [id]);
    await this.applyMove(id, doc.parentId, move);
    this.startMove(move);
    return toOrganization(doc);
  }

  /**
   * This instance's own move, applied to its tree at once (a reload of 100,000 organizations takes
   * seconds: bench/results/2026-11-26T09-30-05-org-tree-before.json); other instances reload on the feed's bump.
   */
  private async applyMove(id: string, parentId: string | undefined, move: OrgMove): Promise<void> {
    // A load in flight may have read before the move: let it land first, or it would replace the tree with the old one.
    await this.loading?.catch(() => undefined);
    const s = this.snapshot;
    if (!s) return;
    const old = s.parent.get(id);
    const siblings = old === undefined ? [] : (s.children.get(old) ?? []);
    const at = siblings.indexOf(id);
    if (at >= 0) siblings.splice(at, 1);
    s.parent.set(id, parentId);
    if (parentId) {
      const list = s.children.get(parentId) ?? [];
      list.push(id);
      s.children.set(parentId, list);
    }
    s.move = move;
  }

  /**
   * Records a move as RUNNING. Another move still running is waited for a few seconds (a small
   * move's rewrite ends within its settle time), then answered 409.
   */
  private async beginMove(m: { orgId: string; from: string[]; to: string[] }): Promise<OrgMove> {
    if (!this.moveTask) throw new Error('organization moves need the move task');
    const waitUntil = Date.now() + MOVE_WAIT_MS;
    let last = await this.moves.get();
    while (last?.doc.state === 'RUNNING' && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await this.moves.get();
    }
    if (last?.doc.state === 'RUNNING') {
      throw new ConflictError(`organization ${last.doc.orgId} is still moving; retry when its move is done (GET /admin/organizations/${last.doc.orgId}/move)`);
    }
    const move: OrgMove = { ...m, state: 'RUNNING', recordsRewritten: 0, startedAt: new Date().toISOString() };
    try {
      await this.moves.begin(move, last);
    } catch (err) {
      if (err instanceof ConflictError) throw new ConflictError('another organization move started at the same time; retry when it is done');
      throw err;
    }
    return move;
  }

  private startMove(move: OrgMove): void {
    // The request does not wait: the task runs in the background and a failure is retried inside it.
    this.moveTask?.start(move).catch(() => undefined);
  }

  /** Resumes the rewrite of a move left RUNNING (its instance stopped); at start-up. */
  async resumeMove(): Promise<void> {
    const cur = await this.moves.get();
    if (cur?.doc.state === 'RUNNING') {
      await this.load();
      this.startMove(cur.doc);
    }
  }

  /** Where the last move of organization `id` stands; 404 when its last move is not the last one recorded. */
  async moveStatus(id: string): Promise<OrganizationMoveStatus> {
    const cur = await this.moves.get();
    if (!cur || cur.doc.orgId !== id) throw new NotFoundError(`no move of organization ${id} is recorded (only the last move is kept)`);
    const m = cur.doc;
    const remaining = m.state === 'RUNNING' && this.moveTask ? await this.moveTask.remaining(m) : 0;
    return {
      orgId: m.orgId,
      ...(m.from.length > 0 ? { fromParentId: m.from[m.from.length - 1] } : {}),
      ...(m.to.length > 0 ? { toParentId: m.to[m.to.length - 1] } : {}),
      state: m.state,
      recordsRewritten: m.recordsRewritten,
      recordsRemaining: remaining,
      startedAt: m.startedAt,
      ...(m.finishedAt ? { finishedAt: m.finishedAt } : {}),
    };
  }

  /** The move is done: this instance drops its compensation at once, every other one on the feed's bump. */
  async moveDone(): Promise<void> {
    await this.feed.bump('organizations', []);
    await this.loading?.catch(() => undefined);
    if (this.snapshot) delete this.snapshot.move;
  }

  /** The organizations the caller sees (its subtree; every one for a system token), at most `limit`. */
  async visibleTree(access: Access, limit: number): Promise<{ organizations: Organization[]; truncated: boolean }> {
    const root = access.unrestricted ? undefined : (access.principal.orgId ?? null);
    const docs = root === null ? [] : await this.store.listSubtree(root, limit + 1);
    return { organizations: docs.slice(0, limit).map(toOrganization), truncated: docs.length > limit };
  }

  async get(id: string, access: Access): Promise<Organization> {
    const doc = await this.store.get(id);
    if (!doc) throw new NotFoundError(`organization ${id} not found`);
    await access.assertOrg(id);
    return toOrganization(doc);
  }
}
