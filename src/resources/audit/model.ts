/** Audit events (extension): who did what to which record, and who was refused. */

export const AUDIT_KINDS = ['WRITE', 'REFUSAL'] as const;
/** WRITE: a write operation called with a token (any outcome); REFUSAL: any operation answered 401 or 403. */
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditActor {
  /** Absent when the request carried no valid token (401). */
  tokenId?: string;
  name?: string;
  role?: string;
  orgId?: string;
  /** The client's address: the socket's peer, or the client a trusted proxy names (ECS_TRUSTED_PROXIES). */
  address?: string;
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
}

export interface AuditSearchCriteria {
  from?: string;
  to?: string;
  actorTokenId?: string;
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
