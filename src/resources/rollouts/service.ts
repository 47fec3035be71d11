/**
 * Rollouts of an agent version (an extension): create, read, search, and the operator's
 * moves (pause, resume, abort, rollback). The work itself — sending rings, judging them,
 * rolling back — is done by the RolloutDriver of whichever instance holds the rollout's lease
 * (driver.ts); every move here is a conditional write of the rollout's document, which the
 * driver meets at its next write, and an announcement on the change feed, which wakes every
 * instance's driver at once.
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { pageQuery } from '../../store/page-query.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { toPage, type Page, type PageRequest } from '../../domain.js';
import type { Query } from '../../store/doc-store.js';
import { rolloutEvent, type RolloutAuditSink } from './audit.js';
import { isTimeZone } from './rings.js';
import { FINAL_STATES, ROLLOUT_SORT_FIELDS, type NewRollout, type Rollout, type RolloutDoc, type RolloutState } from './model.js';
import type { RolloutStore, StoredRollout } from './store.js';

export type RolloutMove = 'pause' | 'resume' | 'abort' | 'rollback';

/** The states each move starts from, and where it leads. */
const MOVES: Record<RolloutMove, { from: readonly RolloutState[]; to: RolloutState; operation: string }> = {
  pause: { from: ['RUNNING'], to: 'PAUSED', operation: 'pauseRollout' },
  resume: { from: ['PAUSED', 'HALTED'], to: 'RUNNING', operation: 'resumeRollout' },
  abort: { from: ['RUNNING', 'PAUSED', 'HALTED'], to: 'ABORTED', operation: 'abortRollout' },
  rollback: { from: ['RUNNING', 'PAUSED', 'HALTED', 'COMPLETED', 'ABORTED'], to: 'ROLLING_BACK', operation: 'rollbackRollout' },
};

export function toRollout(hit: StoredRollout): Rollout {
  const d = hit.doc;
  const out: Rollout = {
    id: d.id,
    name: d.name,
    orgId: d.orgId,
    targetVersion: d.targetVersion,
    rings: d.rings,
    soakSeconds: d.soakSeconds,
    gate: d.gate,
    autoRollback: d.autoRollback,
    windows: d.windows,
    state: d.state,
    currentRing: d.currentRing,
    startedAt: d.startedAt,
    updatedAt: d.updatedAt,
    createdBy: d.createdBy,
    version: hit.version,
  };
  if (d.reason !== undefined) out.reason = d.reason;
  if (d.finishedAt !== undefined) out.finishedAt = d.finishedAt;
  return out;
}

/** What the service needs of the organization tree: existence and subtrees. */
export interface RolloutOrgs {
  exists(orgId: string): Promise<boolean>;
  isWithin(orgId: string, rootId: string): Promise<boolean>;
}

export class RolloutService {
  constructor(
    private readonly store: RolloutStore,
    private readonly orgs: RolloutOrgs,
    private readonly audit: RolloutAuditSink,
    /** Announces a changed rollout to every instance (the change feed), so each driver looks at once. */
    private readonly announce: (id: string) => Promise<void>,
  ) {}

  /** 403 unless the caller is system or an admin whose subtree holds the organization. */
  private async assertWriter(access: Access, orgId: string): Promise<void> {
    if (access.role !== 'system' && access.role !== 'admin') throw new ForbiddenError(`role ${access.role} may not change rollouts`);
    await access.assertOrg(orgId);
  }

  /** 400 for rings or windows naming organizations outside the rollout's, or a time zone the runtime does not know. */
  private async check(input: NewRollout, access: Access): Promise<void> {
    if (!(await this.orgs.exists(input.orgId))) throw new NotFoundError(`organization ${input.orgId} not found`);
    await this.assertWriter(access, input.orgId);
    const named = [...input.rings.flatMap((r) => ('orgIds' in r ? r.orgIds : [])), ...(input.windows ?? []).map((w) => w.orgId)];
    for (const orgId of new Set(named)) {
      if (!(await this.orgs.exists(orgId))) throw new BadRequestError(`body: organization ${orgId} not found`);
      if (!(await this.orgs.isWithin(orgId, input.orgId))) {
        throw new BadRequestError(`body: organization ${orgId} is not ${input.orgId} or below it`);
      }
    }
    if (!input.targetVersion.linux && !input.targetVersion.mac && !input.targetVersion.windows) {
      throw new BadRequestError('body.targetVersion: at least one of linux, mac and windows is needed');
    }
    for (const w of input.windows ?? []) {
      if (!isTimeZone(w.timeZone)) throw new BadRequestError(`body.windows: "${w.timeZone}" is not a known time zone (e.g. Europe/Berlin)`);
    }
  }

  /** POST /rollouts: RUNNING at once; its first ring starts at the next driver's poll (this instance's is woken). */
  async create(input: NewRollout, access: Access, createdId?: string): Promise<Rollout> {
    await this.check(input, access);
    const p = access.principal;
    const now = new Date().toISOString();
    const doc: RolloutDoc = {
      id: createdId ?? crypto.randomUUID(),
      name: input.name,
      orgId: input.orgId,
      targetVersion: input.targetVersion,
      soakSeconds: input.soakSeconds,
      gate: input.gate,
      autoRollback: input.autoRollback,
      windows: (input.windows ?? []).map((w) => ({ ...w, days: [...new Set(w.days)] })),
      state: 'RUNNING',
      rings: input.rings.map((r) => ({
        ...('orgIds' in r ? { orgIds: r.orgIds } : { percent: r.percent }),
        state: 'PENDING',
        counts: { total: 0, upgraded: 0, healthy: 0, failed: 0, pending: 0 },
      })),
      currentRing: 0,
      reason: 'started',
      previousPins: [],
      creator: { role: p.role === 'system' ? 'system' : 'admin', name: p.name, ...(p.tokenId ? { tokenId: p.tokenId } : {}), orgId: input.orgId },
      createdBy: access.userKey,
      startedAt: now,
      updatedAt: now,
    };
    let saved: StoredRollout;
    try {
      saved = await this.store.create(doc);
    } catch (err) {
      const earlier = err instanceof ConflictError && createdId !== undefined ? await this.store.get(doc.id) : undefined;
      if (earlier) return toRollout(earlier);
      throw err;
    }
    await this.audit.record(rolloutEvent(doc, { operation: 'createRollout', from: 'RUNNING', to: 'RUNNING', reason: 'started' }, { name: p.name, role: p.role, ...(p.tokenId ? { tokenId: p.tokenId } : {}) }));
    await this.announce(doc.id);
    return toRollout(saved);
  }

  /** A rollout the caller may read: 404 unknown, 403 outside the caller's subtree. */
  private async visible(id: string, access: Access): Promise<StoredRollout> {
    const hit = await this.store.get(id);
    if (!hit) throw new NotFoundError(`rollout ${id} not found`);
    await access.assertOrg(hit.doc.orgId);
    return hit;
  }

  async get(id: string, access: Access): Promise<Rollout> {
    return toRollout(await this.visible(id, access));
  }

  /** POST /rollouts/page-search: within the caller's subtree, newest first unless sorted. */
  async search(criteria: { orgId?: string; state?: RolloutState }, pr: PageRequest, access: Access): Promise<Page<Rollout>> {
    const filter: Query[] = [];
    if (criteria.state) filter.push({ term: { state: criteria.state } });
    const scope = await access.resolveScope(criteria.orgId, true);
    if (scope) filter.push(scope);
    const res = await this.store.search({ bool: { filter } }, pageQuery(pr, ROLLOUT_SORT_FIELDS, [{ field: 'startedAt', direction: 'DESC' }]));
    return toPage(pr, res.total, res.items.map(toRollout));
  }

  /**
   * POST /rollouts/{id}/pause|resume|abort|rollback: one move of the state machine, atomic
   * against the driver's writes; 409 from a state the move does not start from. Asking for the
   * state the rollout is already in answers it as it is.
   */
  async move(id: string, move: RolloutMove, access: Access, requestId?: string): Promise<Rollout> {
    const m = MOVES[move];
    const p = access.principal;
    const out = await readModifyWrite(async () => {
      const hit = await this.visible(id, access);
      await this.assertWriter(access, hit.doc.orgId);
      const d = hit.doc;
      if (d.state === m.to) return { hit, changed: false };
      if (!m.from.includes(d.state)) {
        throw new ConflictError(`rollout ${id} is ${d.state}; ${move} applies to ${m.from.join(', ')}`);
      }
      const now = new Date().toISOString();
      const reason = `${move} by ${p.name}`;
      const next: RolloutDoc = { ...d, state: m.to, reason, updatedAt: now };
      if (FINAL_STATES.includes(m.to)) next.finishedAt = now;
      if (move === 'rollback') {
        delete next.finishedAt;
        next.rollbackSent = false;
      }
      if (move === 'resume' && d.state === 'HALTED') {
        // The ring that failed its gate is judged again from now, as after its last send.
        const ring = d.rings[d.currentRing];
        next.rings = d.rings.map((r, i) => (i === d.currentRing && ring ? { ...r, state: 'SOAKING', sentAt: now } : r));
      }
      return { hit: await this.store.replace(next, hit, true), changed: true, from: d.state, reason };
    });
    if (out.changed && out.from) {
      const actor = { name: p.name, role: p.role, ...(p.tokenId ? { tokenId: p.tokenId } : {}), ...(requestId ? { requestId } : {}) };
      await this.audit.record(rolloutEvent(out.hit.doc, { operation: m.operation, from: out.from, to: m.to, reason: out.reason ?? move }, actor));
      await this.announce(id);
    }
    return toRollout(out.hit);
  }
}
