/**
 * How a ring stands: each of its endpoints upgraded, healthy, failed or pending, and the
 * ring's verdict at its gate. Pure functions over what the driver read in bulk (targets,
 * endpoints, command statuses).
 */
import type { FleetAgent } from '../endpoints/agent-scan.js';
import type { EffectiveCommandMessageStatus } from '../commands/model.js';
import type { RingCounts, RolloutGate, RolloutTargetDoc } from './model.js';

/** Command statuses that mean the upgrade command will not reach the agent. */
const FAILED_COMMAND: readonly EffectiveCommandMessageStatus[] = ['MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL', 'EXPIRED'];
/** Presence states in which an upgraded agent is not alive. */
const NOT_ALIVE = new Set(['DISCONNECTED', 'UNINSTALLED', 'POTENTIALLY_DISCONNECTED']);

export type TargetOutcome = 'healthy' | 'upgraded' | 'failed' | 'pending' | 'pending-away' | 'gone';

/** `v3.1.0` and `3.1.0` are the same version. */
export function sameVersion(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const strip = (v: string): string => v.trim().toLowerCase().replace(/^v/, '');
  return strip(a) === strip(b);
}

/**
 * One endpoint of a ring at `now`: healthy when it reports the target version and is alive
 * (neither disconnected nor silent past its presence timeout); upgraded when it reports the
 * version but is no longer alive; failed when its
 * command failed, or when it was online at the ring's start and has not reported the version
 * within `withinSeconds` of its command; otherwise pending (`pending-away` for one held by its
 * window or offline when its ring started: never failed for being away).
 */
export function outcomeOf(
  t: RolloutTargetDoc,
  agent: FleetAgent | undefined,
  command: EffectiveCommandMessageStatus | undefined,
  gate: RolloutGate,
  now: number,
): TargetOutcome {
  if (!agent || agent.deleted) return 'gone';
  if (sameVersion(agent.clientVersion, t.toVersion)) {
    // The version report came from the new build and was itself a sign of life; presence (applied
    // on read) then tells whether it is still alive: disconnected, or silent past its timeout, it is not.
    return NOT_ALIVE.has(agent.connectionStatus ?? '') ? 'upgraded' : 'healthy';
  }
  if (t.state === 'HELD') return 'pending-away';
  if (command && FAILED_COMMAND.includes(command)) return 'failed';
  if (t.offlineAtStart) return 'pending-away';
  const sentAt = t.sentAt ? Date.parse(t.sentAt) : now;
  return now - sentAt >= gate.withinSeconds * 1000 ? 'failed' : 'pending';
}

/** Running tallies of a ring, added to batch by batch. */
export interface RingTally extends RingCounts {
  /** Pending endpoints that count toward the gate (online when sent, still within their time). */
  pendingJudged: number;
}

export function emptyTally(): RingTally {
  return { total: 0, upgraded: 0, healthy: 0, failed: 0, pending: 0, pendingJudged: 0 };
}

export function addOutcome(t: RingTally, o: TargetOutcome): void {
  if (o === 'gone') return;
  t.total++;
  if (o === 'healthy') {
    t.upgraded++;
    t.healthy++;
  } else if (o === 'upgraded') t.upgraded++;
  else if (o === 'failed') t.failed++;
  else {
    t.pending++;
    if (o === 'pending') t.pendingJudged++;
  }
}

export function countsOf(t: RingTally): RingCounts {
  return { total: t.total, upgraded: t.upgraded, healthy: t.healthy, failed: t.failed, pending: t.pending };
}

export type Verdict = { kind: 'wait' } | { kind: 'pass' | 'fail'; reason: string };

/**
 * The ring's verdict once its soak is over: it passes when the healthy share of its judged
 * endpoints (upgraded, failed, or pending within their time) reaches the gate; it fails when
 * that share can no longer reach it, or when the gate's time is up. A ring with nothing to
 * judge (every endpoint away) passes.
 */
export function verdict(ring: number, t: RingTally, gate: RolloutGate, soakOver: boolean, gateTimeUp: boolean): Verdict {
  if (!soakOver) return { kind: 'wait' };
  const judged = t.upgraded + t.failed + t.pendingJudged;
  const pct = judged === 0 ? 100 : (100 * t.healthy) / judged;
  const best = judged === 0 ? 100 : (100 * (t.healthy + t.pendingJudged)) / judged;
  const reason = `ring ${ring + 1}: ${formatPercent(pct)} % healthy of ${judged.toLocaleString('en-US')}, gate ${gate.minHealthyPercent} %`;
  if (pct >= gate.minHealthyPercent) return { kind: 'pass', reason };
  if (best < gate.minHealthyPercent || gateTimeUp || t.pendingJudged === 0) return { kind: 'fail', reason };
  return { kind: 'wait' };
}

function formatPercent(p: number): string {
  return Number.isInteger(p) ? String(p) : p.toFixed(1);
}
