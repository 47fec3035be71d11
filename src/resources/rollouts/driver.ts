/**
 * The background driver of rollouts, one per instance, started and stopped with the
 * instance's other background tasks. A rollout is driven by whichever instance holds its
 * lease: a lease in the rollout's own document (as a job's), taken and renewed by writes
 * conditional on the seq_no the driver last read or wrote. Each poll advances every rollout
 * this driver holds or may take by as many steps as can be taken now: a ring's targets
 * created and organizations pinned, its held endpoints sent their command when their window
 * is open, its soak judged at the gate, the next ring started, a rollback sent.
 *
 * A step's store work is replayable (ring-work.ts): a driver that dies mid-step leaves its last
 * checkpoint behind, and the next one replays the step without sending anything twice. An
 * operator's pause, abort or rollback is a write to the same document: the driver checks it
 * (realtime) before each batch it sends, and its next checkpoint write conflicts.
 */
import { Access, type OrgTree } from '../../access/access.js';
import { WriteConflictError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { PolledWorker } from '../../periodic.js';
import { leaseLive } from '../../store/lease.js';
import { rolloutEvent, type RolloutAuditSink } from './audit.js';
import { countsOf, verdict } from './judge.js';
import { DRIVEN_STATES, type RolloutDoc, type RolloutState } from './model.js';
import { applyPins, pinnedBy, readPins, restorePins, type PinService } from './pins.js';
import type { RingWork } from './ring-work.js';
import type { RolloutStore, StoredRollout } from './store.js';

export interface RolloutDriverOptions {
  /** This instance's name in the lease. */
  holder: string;
  leaseMs: number;
  pollMs: number;
}

/** What a step did: advanced (take the next step now), waiting (until the next poll), or the rollout is no longer ours. */
type StepEnd = { kind: 'advanced' | 'waiting'; held: StoredRollout } | { kind: 'let-go'; written?: boolean };

export class RolloutDriver extends PolledWorker {
  /** The clock maintenance windows are judged by (tests move it). */
  clock: () => Date = () => new Date();

  constructor(
    private readonly store: RolloutStore,
    private readonly work: RingWork,
    private readonly deps: { pins: PinService; orgs: OrgTree; audit: RolloutAuditSink },
    private readonly opts: RolloutDriverOptions,
    private readonly log: Logger,
  ) {
    super('rollout driver poll', opts.pollMs, log);
  }

  /** This instance's name in the leases it holds. */
  get holder(): string {
    return this.opts.holder;
  }

  protected async pollOnce(): Promise<void> {
    const candidates = await this.store.claimable(new Date(), this.opts.holder, 20);
    for (const c of candidates) {
      if (this.stopped) return;
      let held = await this.take(c.id);
      while (held && !this.stopped) {
        const end = await this.step(held);
        if (end.kind === 'let-go') break;
        held = end.held;
        if (end.kind === 'waiting') break;
      }
      if (held && this.stopped) await this.release(held.id);
    }
  }

  /** The lease on a rollout, by a write conditional on a fresh (realtime) read; undefined when another has it or it is not driven. */
  private async take(id: string): Promise<StoredRollout | undefined> {
    const cur = await this.store.get(id);
    if (!cur || !DRIVEN_STATES.includes(cur.doc.state)) return undefined;
    const d = cur.doc;
    if (d.leaseHolder !== this.opts.holder && leaseLive(d)) return undefined;
    try {
      const taken = await this.store.replace({ ...d, leaseHolder: this.opts.holder, leaseExpiresAt: this.leaseUntil() }, cur);
      if (d.leaseHolder !== this.opts.holder) this.log.info({ rollout: id, ring: d.currentRing + 1, state: d.state }, 'rollout taken');
      return taken;
    } catch (err) {
      if (err instanceof WriteConflictError) return undefined;
      throw err;
    }
  }

  /** Gives the lease up when this driver still holds it. */
  private async release(id: string): Promise<void> {
    const cur = await this.store.get(id);
    if (!cur || cur.doc.leaseHolder !== this.opts.holder) return;
    const { leaseHolder: _h, leaseExpiresAt: _e, ...rest } = cur.doc;
    await this.store.replace(rest, cur).catch(() => undefined);
  }

  private leaseUntil(): string {
    return new Date(Date.now() + this.opts.leaseMs).toISOString();
  }

  private access(d: RolloutDoc): Access {
    const c = d.creator;
    return new Access({ role: c.role, name: c.name, ...(c.tokenId ? { tokenId: c.tokenId } : {}), ...(c.orgId ? { orgId: c.orgId } : {}) }, this.deps.orgs);
  }

  /** True when the rollout changed state or left this driver since `d` was read (checked before each batch). */
  private stopCheck(d: RolloutDoc): () => Promise<boolean> {
    return async () => {
      if (this.stopped) return true;
      const cur = await this.store.get(d.id);
      return !cur || cur.doc.state !== d.state || cur.doc.leaseHolder !== this.opts.holder;
    };
  }

  /**
   * The checkpoint: `next` written conditionally on `held`, the lease renewed. On a conflict
   * the rollout is read again: still driven by this driver → the step is taken again from it;
   * else it is let go.
   */
  private async checkpoint(held: StoredRollout, next: RolloutDoc, kind: 'advanced' | 'waiting'): Promise<StepEnd> {
    const final = !DRIVEN_STATES.includes(next.state);
    const doc: RolloutDoc = { ...next, updatedAt: new Date().toISOString() };
    if (final) {
      delete doc.leaseHolder;
      delete doc.leaseExpiresAt;
    } else Object.assign(doc, { leaseHolder: this.opts.holder, leaseExpiresAt: this.leaseUntil() });
    try {
      const saved = await this.store.replace(doc, held);
      return final ? { kind: 'let-go', written: true } : { kind, held: saved };
    } catch (err) {
      if (!(err instanceof WriteConflictError)) throw err;
      return this.reread(held.id);
    }
  }

  private async reread(id: string): Promise<StepEnd> {
    const cur = await this.store.get(id);
    if (cur && DRIVEN_STATES.includes(cur.doc.state) && cur.doc.leaseHolder === this.opts.holder) return { kind: 'advanced', held: cur };
    if (cur && cur.doc.leaseHolder === this.opts.holder) await this.release(id);
    return { kind: 'let-go' };
  }

  /** A change of state: written, then audited with its reason. */
  private async changeState(held: StoredRollout, next: RolloutDoc, operation: string): Promise<StepEnd> {
    const from: RolloutState = held.doc.state;
    const end = await this.checkpoint(held, next, 'advanced');
    if (end.kind !== 'let-go' || end.written) {
      this.log.info({ rollout: next.id, from, to: next.state, reason: next.reason }, 'rollout state changed');
      await this.deps.audit
        .record(rolloutEvent(next, { operation, from, to: next.state, reason: next.reason ?? operation }, { name: `rollout driver ${this.opts.holder}`, role: 'system' }))
        .catch((err: unknown) => this.log.warn({ rollout: next.id, err: { message: (err as Error).message } }, 'rollout state change not audited'));
    }
    return end;
  }

  private async step(held: StoredRollout): Promise<StepEnd> {
    const d = held.doc;
    if (d.state === 'ROLLING_BACK') return this.rollBack(held);
    if (d.state !== 'RUNNING') return (await this.release(d.id), { kind: 'let-go' });
    const i = d.currentRing;
    const ring = d.rings[i];
    const nowIso = new Date().toISOString();
    if (!ring) return this.changeState(held, { ...d, state: 'COMPLETED', reason: `every ring passed`, finishedAt: nowIso }, 'rolloutCompleted');
    const withRing = (patch: Partial<RolloutDoc['rings'][number]>): RolloutDoc['rings'] => d.rings.map((r, k) => (k === i ? { ...r, ...patch } : r));
    if (ring.state === 'PENDING') {
      const { total, fleetOrgIds } = await this.work.createTargets(d, i);
      const access = this.access(d);
      const pin = pinnedBy(ring, d.orgId, fleetOrgIds);
      const unread = pin.filter((o) => !d.previousPins.some((p) => p.orgId === o));
      let cur = held;
      if (unread.length > 0) {
        // The pins as they were, kept before they change: a replay after a crash must not take the rollout's own pins for them.
        const end = await this.checkpoint(cur, { ...d, previousPins: [...d.previousPins, ...(await readPins(this.deps.pins, unread, access))] }, 'advanced');
        if (end.kind === 'let-go') return end;
        cur = end.held;
      }
      await applyPins(this.deps.pins, pin, d.targetVersion, cur.doc.previousPins, access);
      const counts = { total, upgraded: 0, healthy: 0, failed: 0, pending: total };
      return this.checkpoint(cur, { ...cur.doc, rings: cur.doc.rings.map((r, k) => (k === i ? { ...r, state: 'UPGRADING', startedAt: nowIso, counts } : r)) }, 'advanced');
    }
    if (ring.state === 'UPGRADING') {
      const sent = await this.work.sendDue(d, i, this.clock(), this.stopCheck(d));
      if (sent.stopped) return this.reread(d.id);
      const counts = countsOf(await this.work.judge(d, i, Date.now()));
      if (sent.held > 0) return this.checkpoint(held, { ...d, rings: withRing({ counts }) }, 'waiting');
      return this.checkpoint(held, { ...d, rings: withRing({ counts, state: 'SOAKING', sentAt: new Date().toISOString() }) }, 'advanced');
    }
    if (ring.state === 'SOAKING') {
      const now = Date.now();
      const tally = await this.work.judge(d, i, now);
      const sentAt = Date.parse(ring.sentAt ?? nowIso);
      const soakOver = now >= sentAt + d.soakSeconds * 1000;
      const timeUp = now >= sentAt + Math.max(d.soakSeconds, d.gate.withinSeconds) * 1000;
      const v = verdict(i, tally, d.gate, soakOver, timeUp);
      const counts = countsOf(tally);
      if (v.kind === 'wait') return this.checkpoint(held, { ...d, rings: withRing({ counts }) }, 'waiting');
      if (v.kind === 'pass') {
        const next: RolloutDoc = { ...d, rings: withRing({ counts, state: 'PASSED', judgedAt: nowIso }), currentRing: i + 1, reason: `${v.reason}: passed` };
        if (i + 1 >= d.rings.length) return this.changeState(held, { ...next, currentRing: i, state: 'COMPLETED', finishedAt: nowIso }, 'rolloutCompleted');
        return this.changeState(held, next, 'rolloutRingPassed');
      }
      const state = d.autoRollback ? 'ROLLING_BACK' : 'HALTED';
      return this.changeState(held, { ...d, rings: withRing({ counts, state: 'FAILED', judgedAt: nowIso }), state, reason: `${v.reason}: halted` }, 'rolloutHalted');
    }
    // A ring already judged (a replay after the verdict's write): move on to the next one.
    return this.checkpoint(held, { ...d, currentRing: i + 1 }, 'advanced');
  }

  /** ROLLING_BACK: the previous version to every endpoint sent the upgrade, the previous pins restored, then ROLLED_BACK. */
  private async rollBack(held: StoredRollout): Promise<StepEnd> {
    const d = held.doc;
    const lastRing = Math.min(d.currentRing, d.rings.length - 1);
    const res = await this.work.rollback(d, lastRing, this.stopCheck(d));
    if (res.stopped) return this.reread(d.id);
    await restorePins(this.deps.pins, d.previousPins, this.access(d));
    const reason = `rolled back: the previous version sent back to the endpoints upgraded, the pins of ${d.previousPins.length} organization(s) restored (${d.reason ?? 'rollback'})`;
    return this.changeState(held, { ...d, state: 'ROLLED_BACK', rollbackSent: true, reason, finishedAt: new Date().toISOString() }, 'rolloutRolledBack');
  }
}
