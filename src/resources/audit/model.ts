/** Audit events (extension): who did what to which record, and who was refused. */

export const AUDIT_KINDS = ['WRITE', 'REFUSAL', 'SIGN_IN', 'SIGN_OUT'] as const;
/**
 * WRITE: a write operation called with a token or a login session (any outcome); REFUSAL: any
 * operation answered 401 or 403, and a refused sign-in; SIGN_IN / SIGN_OUT: a login session
 * began / ended (sign-out, back-channel logout, a refused recheck at the identity provider, expiry: `reason`).
 */
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditActor {
  /** Absent when the request carried no valid token (401). */
  tokenId?: string;
  name?: string;
  role?: string;
  orgId?: string;
  /** The client's address: the socket's peer, or the client a trusted proxy names (ECS_TRUSTED_PROXIES). */
  address?: string;
  /** A person signed in through the identity provider: its subject, e-mail and issuer (name above). */
  subject?: string;
  email?: string;
  issuer?: string;
}

export interface AuditTarget {
  /** The kind of record named, from the route path (`endpoint`, `license`, `token`, `org`, ...). */
  type?: string;
  id?: string;
  /** The organization of the target: the one the service checked, else the one the request named. */
  orgId?: string;
}

/** One audit event, as stored and as the API shows it. */
export interface AuditEvent {
  id: string;
  timestamp: string;
  kind: AuditKind;
  requestId: string;
  /** The route's operation id. */
  operation: string;
  method: string;
  path: string;
  /** The HTTP status answered. */
  status: number;
  actor: AuditActor;
  target: AuditTarget;
  /** What the operation adds for the trail (a job: its criteria, matched count and who confirmed it); stored, not searchable. */
  details?: Record<string, unknown>;
  /** Why a login session ended or a sign-in was refused (`signed-out`, `backchannel-logout`, `ended-at-idp`, `ended-by-operator`, `idle`, `absolute`, `no-grant`, ...). */
  reason?: string;
}

export interface AuditSearchCriteria {
  from?: string;
  to?: string;
  actorTokenId?: string;
  /** A person's subject at the identity provider. */
  actorSubject?: string;
  actorEmail?: string;
  operation?: string;
  targetType?: string;
  targetId?: string;
  /** Organization of the target (within the caller's subtree). */
  orgId?: string;
  includeChildren?: boolean;
  kind?: AuditKind;
  status?: number;
  requestId?: string;
}
