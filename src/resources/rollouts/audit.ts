/**
 * Every change of a rollout's state goes to the audit trail with its reason: the ones its
 * driver decides (a ring passed or failed its gate, a halt, a rollback sent, completion) and
 * the ones a person or token asks for (pause, resume, abort, rollback). One event shape for
 * both, so the trail of a rollout reads as one history (search it by targetType rollout).
 */
import crypto from 'node:crypto';
import type { AuditEvent } from '../audit/model.js';
import type { RolloutDoc, RolloutState } from './model.js';

/** Where rollout events go (the audit trail's service). */
export interface RolloutAuditSink {
  record(event: AuditEvent): Promise<void>;
}

/** Who changed the state: the driver (an instance), or the caller of a request. */
export interface RolloutActor {
  name: string;
  role?: string;
  tokenId?: string;
  orgId?: string;
  requestId?: string;
}

/** The audit event of one state change (or ring verdict) of a rollout. */
export function rolloutEvent(
  doc: Pick<RolloutDoc, 'id' | 'orgId' | 'currentRing'>,
  change: { operation: string; from: RolloutState; to: RolloutState; reason: string },
  actor: RolloutActor,
): AuditEvent {
  return {
    id: crypto.randomUUID(),
    timestamp: new Date().toISOString(),
    kind: 'WRITE',
    requestId: actor.requestId ?? `rollout-driver-${crypto.randomUUID()}`,
    operation: change.operation,
    method: 'POST',
    path: `/rollouts/${doc.id}`,
    status: 200,
    actor: {
      name: actor.name,
      ...(actor.role ? { role: actor.role } : {}),
      ...(actor.tokenId ? { tokenId: actor.tokenId } : {}),
      ...(actor.orgId ? { orgId: actor.orgId } : {}),
    },
    target: { type: 'rollout', id: doc.id, orgId: doc.orgId },
    details: { from: change.from, to: change.to, ring: doc.currentRing + 1 },
    reason: change.reason,
  };
}
