/**
 * Login sessions of people signed in through the identity provider (docs/sso.md,
 * docs/adr/0071-login-sessions-in-the-store.md). The browser holds only an opaque random
 * secret in a cookie; the store holds the session under the secret's SHA-256.
 */
import type { Grant, Principal } from '../../access/principal.js';
import type { AuditEvent } from '../audit/model.js';

export interface SessionDoc {
  subject: string;
  issuer: string;
  email?: string;
  name?: string;
  /** The identity provider's session id (`sid` of the ID token), named by its back-channel logout tokens. */
  sid?: string;
  grants: Grant[];
  /** The ID token, only as the `id_token_hint` of the end-session URL at sign-out. */
  idToken?: string;
  /**
   * The identity provider's refresh token, sealed with a key of the service's own (never
   * readable from the store alone): what the session is checked again with
   * (docs/adr/0076-sessions-rechecked-at-the-identity-provider.md).
   */
  refreshToken?: string;
  /** When the identity provider last confirmed the person and their grants (sign-in, then each recheck). */
  checkedAt?: string;
  createdAt: string;
  /** Last use, written at most every TOUCH interval (the idle timeout counts from it). */
  lastSeenAt: string;
  /** The absolute end: createdAt + ECS_SESSION_MAX_SECONDS. */
  expiresAt: string;
}

export interface SessionTimeouts {
  /** ECS_SESSION_IDLE_SECONDS */
  idleSeconds: number;
  /** ECS_SESSION_MAX_SECONDS */
  maxSeconds: number;
}

export type SessionEnd = 'idle' | 'absolute';

/** When the session ends if unused from now on (the sooner of idle and absolute), and whether it already has. */
export function sessionExpiry(doc: Pick<SessionDoc, 'lastSeenAt' | 'expiresAt'>, now: number, t: SessionTimeouts): { expiresAt: number; ended?: SessionEnd } {
  const absolute = Date.parse(doc.expiresAt);
  const idle = Date.parse(doc.lastSeenAt) + t.idleSeconds * 1000;
  const expiresAt = Math.min(absolute, idle);
  if (now >= absolute) return { expiresAt, ended: 'absolute' };
  if (now >= idle) return { expiresAt, ended: 'idle' };
  return { expiresAt };
}

/**
 * How stale `lastSeenAt` may get before a use writes it again: a write per request would cost
 * every console click a store write; this bounds the idle timeout's error to a tenth of it
 * (at most a minute).
 */
export function touchIntervalMs(t: SessionTimeouts): number {
  return Math.min(60_000, Math.max(1000, (t.idleSeconds * 1000) / 10));
}

/** What the identity provider says of a session asked again. */
export type SessionRecheck =
  /** The person is still signed in there: their grants now, and the tokens that replace the stored ones. */
  | { kind: 'current'; grants: Grant[]; refreshToken?: string; idToken?: string }
  /** The provider refused (signed out there, disabled, deleted, consent withdrawn): the session ends. */
  | { kind: 'ended'; reason: string };

/**
 * Asks the identity provider about a session again (src/http/sso.ts). Throws when the
 * provider cannot answer (unreachable, 5xx): the session then lives on until it can.
 */
export interface SessionRechecker {
  recheck(doc: SessionDoc): Promise<SessionRecheck>;
}

/** The request an audit event of a session belongs to. */
export interface RequestRef {
  requestId: string;
  method: string;
  path: string;
}

/** Where session events go (the audit trail). */
export interface SessionAudit {
  record(event: AuditEvent): Promise<void>;
  offer(event: AuditEvent): 'queued' | 'dropped';
}

/** What a verified cookie yields. */
export interface VerifiedSession {
  principal: Principal;
  csrfToken: string;
  /** When the session ends unless used again (the sooner of idle and absolute). */
  expiresAt: string;
  doc: SessionDoc;
  hash: string;
}

/**
 * What the HTTP layer needs of login sessions (sign-in, the cookie's check, sign-out, the
 * identity provider's logout): implemented by ./service.ts, as tokens reach it through TokenVerifier.
 */
export interface LoginSessions {
  /** The absolute lifetime (ECS_SESSION_MAX_SECONDS): the cookie's Max-Age. */
  readonly maxSeconds: number;
  create(person: Omit<SessionDoc, 'createdAt' | 'lastSeenAt' | 'expiresAt' | 'checkedAt'>, req: RequestRef): Promise<{ secret: string; hash: string; doc: SessionDoc }>;
  verify(secret: string, req: RequestRef): Promise<VerifiedSession>;
  signOut(session: VerifiedSession, req: RequestRef): Promise<void>;
  endAtIdp(issuer: string, subject: string | undefined, sid: string | undefined, req: RequestRef): Promise<number>;
}
