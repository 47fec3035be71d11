/**
 * The lifecycle of an organization move (docs/adr/0086, 0087): recorded RUNNING before the
 * organization moves, its records' ancestry rewritten in the background (move-task.ts), resumed
 * after a stop, and DONE when the rewrite ends; only the last move is kept.
 */
import { ConflictError, NotFoundError } from '../../errors.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { OrgMove, OrgMoveStore } from './move-store.js';
import type { OrgMoveTask } from './move-task.js';
import type { OrgTreeCache } from './tree-cache.js';

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

export class OrgMoves {
  /** The task rewriting records after a move (set by the resource's builder). */
  task?: OrgMoveTask;

  constructor(
    private readonly cache: OrgTreeCache,
    private readonly feed: ChangeFeedStore,
    readonly store: OrgMoveStore,
  ) {}

  /**
   * Records a move as RUNNING. Another move still running is waited for a few seconds (a small
   * move's rewrite ends within its settle time), then answered 409.
   */
  async begin(m: { orgId: string; from: string[]; to: string[] }): Promise<OrgMove> {
    if (!this.task) throw new Error('organization moves need the move task');
    const waitUntil = Date.now() + MOVE_WAIT_MS;
    let last = await this.store.get();
    while (last?.doc.state === 'RUNNING' && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await this.store.get();
    }
    if (last?.doc.state === 'RUNNING') {
      throw new ConflictError(`organization ${last.doc.orgId} is still moving; retry when its move is done (GET /admin/organizations/${last.doc.orgId}/move)`);
    }
    const move: OrgMove = { ...m, state: 'RUNNING', recordsRewritten: 0, startedAt: new Date().toISOString() };
    try {
      await this.store.begin(move, last);
    } catch (err) {
      if (err instanceof ConflictError) throw new ConflictError('another organization move started at the same time; retry when it is done');
      throw err;
    }
    return move;
  }

  /** Ends the record of a move that moved nothing, so the next move is not refused. */
  async abandon(move: OrgMove): Promise<void> {
    await this.store.save({ ...move, state: 'DONE', finishedAt: new Date().toISOString() });
  }

  /** Starts the background rewrite of a move's records (its failures are retried by the task). */
  start(move: OrgMove): void {
    this.task?.start(move).catch(() => undefined);
  }

  /** Resumes the rewrite of a move left RUNNING (its instance stopped); at start-up. */
  async resume(): Promise<void> {
    const cur = await this.store.get();
    if (cur?.doc.state === 'RUNNING') {
      await this.cache.load();
      this.start(cur.doc);
    }
  }

  /** Where the last move of organization `id` stands; 404 when its last move is not the last one recorded. */
  async status(id: string): Promise<OrganizationMoveStatus> {
    const cur = await this.store.get();
    if (!cur || cur.doc.orgId !== id) throw new NotFoundError(`no move of organization ${id} is recorded (only the last move is kept)`);
    const m = cur.doc;
    const remaining = m.state === 'RUNNING' && this.task ? await this.task.remaining(m) : 0;
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
  async done(orgId: string): Promise<void> {
    const s = await this.cache.current();
    if (s) delete s.move;
    await this.feed.append('organizations', [orgId]);
  }
}
