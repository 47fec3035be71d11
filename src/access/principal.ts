/**
 * Who acts: the roles, a person's grants and the principal a request yields (spec section 5;
 * the token lifecycle and roles are designed here). Below http and resources: routes declare
 * the roles they admit, services judge through `Access` (./access.ts).
 */

export const ROLES = ['system', 'admin', 'reader', 'agent'] as const;
export type Role = (typeof ROLES)[number];

/** Shorthands for route declarations. */
export const READERS: readonly Role[] = ['admin', 'reader'];
export const WRITERS: readonly Role[] = ['admin'];
export const SYSTEM_ONLY: readonly Role[] = [];


/** A role at an organization, covering its subtree (`system`: everything, no organization). */
export interface Grant {
  role: Exclude<Role, 'agent'>;
  orgId?: string;
}

/** The person behind a single sign-on login session (docs/sso.md): who the identity provider says signed in. */
export interface Person {
  subject: string;
  issuer: string;
  email?: string;
  name?: string;
}

export interface Principal {
  /**
   * 'anonymous' only on operations that declare no security (callers inside the perimeter).
   * A person's is the strongest role among their grants (for logs and coarse checks; what they
   * may reach is decided by `grants`).
   */
  role: Role | 'anonymous';
  tokenId?: string;
  name: string;
  /** A token's organization; a person's: the organization of their first strongest grant. */
  orgId?: string;
  endpointId?: string;
  /** A person's grants (several: admin of one customer, reader of another). Tokens have none: their role at orgId. */
  grants?: readonly Grant[];
  /** Set for a person signed in through the identity provider. */
  person?: Person;
}

/** Who a caller is for fairness, idempotency and cursors: a token's id, or a person's issuer and subject. */
export function callerKey(p: Principal): string | undefined {
  return p.tokenId ?? (p.person ? `person:${p.person.issuer}#${p.person.subject}` : undefined);
}

/** The roles a principal holds (a token: one; a person: one per grant). */
export function rolesOf(p: Principal): ReadonlyArray<Principal['role']> {
  return p.grants ? p.grants.map((g) => g.role) : [p.role];
}

/** True when a route admitting `roles` (and `system`, always) admits the principal. */
export function admits(roles: readonly Role[], p: Principal): boolean {
  return rolesOf(p).some((r) => r === 'system' || roles.includes(r as Role));
}

export const ANONYMOUS: Principal = { role: 'anonymous', name: 'anonymous' };
