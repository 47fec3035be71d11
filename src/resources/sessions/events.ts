/** A login session's principal and the audit events of its beginning, end or refusal. */
import crypto from 'node:crypto';
import type { Grant, Principal } from '../../access/principal.js';
import type { AuditEvent } from '../audit/model.js';
import type { RequestRef, SessionDoc } from './model.js';

const ROLE_RANK: Record<Grant['role'], number> = { system: 3, admin: 2, reader: 1 };

/** The principal of a session: the person, their grants, the strongest role for logs and coarse checks. */
export function principalOf(doc: SessionDoc): Principal {
  const strongest = [...doc.grants].sort((a, b) => ROLE_RANK[b.role] - ROLE_RANK[a.role])[0];
  return {
    role: strongest?.role ?? 'reader',
    name: doc.name ?? doc.email ?? doc.subject,
    ...(strongest?.orgId ? { orgId: strongest.orgId } : {}),
    grants: doc.grants,
    person: { subject: doc.subject, issuer: doc.issuer, ...(doc.email ? { email: doc.email } : {}), ...(doc.name ? { name: doc.name } : {}) },
  };
}

/** The audit event of a session's beginning, end or refusal. */
export function sessionEvent(
  kind: AuditEvent['kind'],
  operation: string,
  status: number,
  req: RequestRef,
  person: Pick<SessionDoc, 'subject' | 'issuer' | 'email' | 'name' | 'grants'>,
  extra: { sessionHash?: string; reason?: string } = {},
): AuditEvent {
  const p = principalOf({ ...person, createdAt: '', lastSeenAt: '', expiresAt: '' });
  const orgId = person.grants[0]?.orgId;
  return {
    id: crypto.randomUUID(),
    timestamp: new Date().toISOString(),
    kind,
    requestId: req.requestId,
    operation,
    method: req.method,
    path: req.path,
    status,
    actor: {
      name: p.name,
      ...(person.grants.length > 0 ? { role: p.role } : {}),
      ...(p.orgId ? { orgId: p.orgId } : {}),
      subject: person.subject,
      issuer: person.issuer,
      ...(person.email ? { email: person.email } : {}),
    },
    // The session is named by a prefix of its hash: enough to tell sessions apart, useless as a credential.
    target: { type: 'session', ...(extra.sessionHash ? { id: extra.sessionHash.slice(0, 16) } : {}), ...(orgId ? { orgId } : {}) },
    ...(extra.reason ? { reason: extra.reason } : {}),
  };
}
