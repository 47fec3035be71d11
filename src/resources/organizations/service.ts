/**
 * Organizations form a tree ({id, name, parentId?}); every 403 decision and every
 * includeChildren / direct-children / all-descendants query asks it. The tree is held in
 * memory (organizations change rarely, are asked about on every request). This instance's own
 * changes are applied to it in place; changes made elsewhere arrive through the change feed
 * (`applyChanged`: only the changed organizations are read). It is read whole at first use,
 * when the feed says changes were lost, and when neither a load nor the feed has confirmed it
 * for `cacheSeconds` (the feed unreadable). An unknown id that exists (an organization created
 * elsewhere, not yet announced) is read and added alone. Design: docs/adr/0066.
 *
 * The tree also answers the ancestry stamped on org-scoped records (`pathOf`, docs/adr/0085) and
 * the one-term subtree queries over it (`subtreeQuery`); a move rewrites that ancestry in the
 * background (move-task.ts, docs/adr/0086) while reads compensate for it (docs/adr/0087).
 */
import type { OrgTree, Access } from '../../access/access.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { readModifyWrite } from '../../store/optimistic.js';
import type { OrganizationDoc, OrganizationStore } from './store.js';
import type { Query } from '../../store/doc-store.js';
import type { OrgAncestry } from '../../store/org-path.js';
import { pathFieldOf } from '../../store/org-path.js';
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
  children: Map<string, Set<string>>;
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

/** How long a move waits for another one still rewriting records before it answers 409. */
const MOVE_WAIT_MS = 10_000;

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

export class OrganizationService implements OrgTree, OrgAncestry {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  /** When the change feed last confirmed the tree in step (see `confirmCurrent`). */
  private confirmedAt = 0;
  /** The task rewriting records after a move (set by the container). */
  moveTask?: OrgMoveTask;

  constructor(
    private readonly store: OrganizationStore,
    private readonly cacheSeconds: number,
    private readonly feed: ChangeFeedStore,
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
    this.loading ??= Promise.all([this.store.allLinks(), this.moves.get()])
      .then(([links, move]) => {
        const s: Snapshot = { parent: new Map(), children: new Map(), loadedAt: Date.now() };
        for (const l of links) link(s, l.id, l.parentId);
        this.setMove(s, move?.doc);
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
   * Renames and/or moves an organization. A move rewrites the ancestors of the organizations below
   * it at once and the ancestry of the records below it in the background (move-task.ts; progress:
   * `moveStatus`); it refuses a parent inside the subtree, and waits for (then 409) another move
   * still rewriting records. The caller sends no version, so a concurrent change of the same
   * organization is re-read and applied again.
   */
  async update(id: string, input: OrganizationUpdate): Promise<Organization> {
    let move: OrgMove | undefined;
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
        move ??= await this.beginMove({ orgId: id, from: cur.doc.ancestors, to: ancestors });
      }
      try {
        await this.store.replace(cur, next);
      } catch (err) {
        // Nothing moved: the record of the move ends at once, so the next move is not refused.
        if (move && !(err instanceof ConflictError)) await this.moves.save({ ...move, state: 'DONE', finishedAt: new Date().toISOString() });
        throw err;
      }
      return { doc: next, moved: isMove };
    });
    if (moved) {
      const below = await this.store.descendantsOf(id);
      await this.store.setAncestors(
        below.map((d) => ({ id: d.id, ancestors: [...doc.ancestors, id, ...d.ancestors.slice(d.ancestors.indexOf(id) + 1)] })),
      );
      const s = await this.current();
      if (s) {
        link(s, id, doc.parentId);
        if (move) s.move = move;
      }
    }
    await this.feed.append('organizations', [id]);
    if (moved && move) this.moveTask?.start(move).catch(() => undefined);
    return toOrganization(doc);
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

  /** Resumes the rewrite of a move left RUNNING (its instance stopped); at start-up. */
  async resumeMove(): Promise<void> {
    const cur = await this.moves.get();
    if (cur?.doc.state === 'RUNNING') {
      await this.load();
      this.moveTask?.start(cur.doc).catch(() => undefined);
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

  /** The move is done: this instance drops its compensation at once, every other one on the feed's change. */
  async moveDone(orgId: string): Promise<void> {
    const s = await this.current();
    if (s) delete s.move;
    await this.feed.append('organizations', [orgId]);
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
