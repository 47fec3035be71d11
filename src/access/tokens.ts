/** Tokens as the permission model sees them: their records, how a secret is hashed, and who verifies them. */
import crypto from 'node:crypto';
import type { Role } from './principal.js';

export interface TokenRecord {
  id: string;
  name: string;
  orgId?: string;
  role: Role;
  endpointId?: string;
  expiresAt?: string;
  revoked: boolean;
}

export interface TokenVerifier {
  /** The token whose secret hashes to `hash`, if any (revoked and expired included). */
  findByHash(hash: string): Promise<TokenRecord | undefined>;
}

/** Forgets cached tokens (after a revocation); implemented by the HTTP layer's authenticator. */
export interface TokenCache {
  /** Forgets tokens at once (after revocation). */
  forget(...tokenIds: string[]): void;
  /** Forgets every cached token (revocations not known one by one). */
  forgetAll(): void;
}

/** SHA-256 of a token's secret, one-shot (no Hash object: every authenticated request hashes once). */
export function tokenDigest(secret: string): Buffer {
  return crypto.hash('sha256', secret, 'buffer');
}

export function hashToken(secret: string): string {
  return tokenDigest(secret).toString('hex');
}

/** A new opaque secret: 32 random bytes, base64url, with a recognisable prefix. */
export function newTokenSecret(): string {
  return `ecs_${crypto.randomBytes(32).toString('base64url')}`;
}

/** The session's CSRF token: derived from its secret, so it is never stored and dies with the session. */
export function csrfTokenFor(sessionSecret: string): string {
  return crypto.createHmac('sha256', sessionSecret).update('ecs csrf token').digest('base64url');
}
