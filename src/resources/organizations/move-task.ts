/**
 * The background task of an organization move (docs/adr/0086-organization-move-task.md): it
 * rewrites the ancestry of every record below the moved organization, in passes that each
 * select only the records still showing the old place, until a pass finds none. It is resumable
 * because it keeps no cursor: an instance that starts while a move is RUNNING (the one that
 * accepted it crashed) runs the same passes again. Reads stay correct meanwhile (docs/adr/0087).
 */
import type { StoreContext } from '../../store/client.js';
import { countStale, movedAway, rewriteOrgPaths } from '../../store/org-path-rewrite.js';
import type { Logger } from '../../log.js';
import type { OrgMove, OrgMoveStore } from './move-store.js';

export interface OrgMoveTaskOptions {
  /**
   * How long after the move started the task keeps checking: every instance has reloaded its
   * tree by then (a few change-feed polls), so none stamps the old ancestry on a new record after it.
   */
  settleMs: number;
  /** Wait before a failed pass is tried again. */
  retryMs: number;
}

export class OrgMoveTask {
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: StoreContext,
    private readonly moves: OrgMoveStore,
    private readonly opts: OrgMoveTaskOptions,
    private readonly log: Logger | undefined,
    /** Told when the move is done (the tree drops the move's compensation). */
    private readonly onDone: (orgId: string) => Promise<void>,
  ) {}

  /** Starts the passes of `move` unless they already run here; resolves when the move is done or the task stops. */
  start(move: OrgMove): Promise<void> {
    this.running ??= this.run(move).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Ends the task after the pass in flight (service shutdown); a RUNNING move resumes at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }

  /** Records still to rewrite for `move` (`refresh`: exact, and every rewritten record searchable). */
  remaining(move: OrgMove, opts: { refresh?: boolean } = {}): Promise<number> {
    return countStale(this.ctx, movedAway(move.orgId, move.from, move.to), opts);
  }

  private async run(move: OrgMove): Promise<void> {
    const select = movedAway(move.orgId, move.from, move.to);
    const settleUntil = Date.parse(move.startedAt) + this.opts.settleMs;
    let total = move.recordsRewritten;
    let saved = Date.now();
    while (!this.stopped) {
      try {
        const before = total;
        await rewriteOrgPaths(this.ctx, select, {
          onBatch: async (n) => {
            total = before + n;
            // Progress is written at most once a second: the record is read by people, not by the passes.
            if (Date.now() - saved >= 1000) {
              saved = Date.now();
              await this.moves.save({ ...move, recordsRewritten: total });
            }
          },
        });
        if (total === before && Date.now() >= settleUntil && (await this.remaining(move, { refresh: true })) === 0) break;
        if (total === before) await this.pause(Math.min(this.opts.retryMs, Math.max(0, settleUntil - Date.now())));
      } catch (err) {
        this.log?.warn({ err, orgId: move.orgId }, 'organization move: a pass failed; trying again');
        await this.pause(this.opts.retryMs);
      }
    }
    if (this.stopped) return;
    const done: OrgMove = { ...move, recordsRewritten: total, state: 'DONE', finishedAt: new Date().toISOString() };
    await this.moves.save(done);
    this.log?.info({ orgId: move.orgId, recordsRewritten: total }, 'organization move done');
    await this.onDone(move.orgId);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}
