/**
 * Authentication and authorization, in one place (spec section 5; the token lifecycle and
 * roles are designed here). A request carries an opaque token in `x-auth-token`; the
 * principal it yields decides which roles a route admits and which organizations and
 * endpoints a service may touch.
 */
import crypto from 'node:crypto';
import type { estypes } from '@elastic/elasticsearch';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '../errors.js';
import type { UserKey } from '../domain.js';

/** An Elasticsearch query; the org filters below are handed to the stores as they are. */
type Query = estypes.QueryDslQueryContainer;

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

export interface OrgTree {
  exists(orgId: string): Promise<boolean>;
  /** True when `orgId` is `rootId` or below it. */
  isWithin(orgId: string, rootId: string): Promise<boolean>;
  /**
   * A query matching the records of the org and every organization below it, whose organization
   * is in `orgField`: one term on the ancestry beside it, whatever the subtree's size, plus one
   * term while an organization move is rewriting records (docs/adr/0087-reads-during-an-organization-move.md).
   */
  subtreeQuery(orgId: string, orgField: string): Promise<Query>;
}

/** Matches no record (a restricted principal without an organization). */
const MATCH_NONE: Query = { match_none: {} };

export const TOKEN_HEADER = 'x-auth-token';

export function hashToken(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new opaque secret: 32 random bytes, base64url, with a recognisable prefix. */
export function newTokenSecret(): string {
  return `ecs_${crypto.randomBytes(32).toString('base64url')}`;
}

function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

interface CacheEntry {
  record: TokenRecord | undefined;
  until: number;
}

/** What failed authentication may cost: nothing at the store beyond a small budget. */
export interface FailedAuthOptions {
  /** How long an unknown token hash is answered 401 without a store lookup; 0 disables. */
  negativeCacheSeconds: number;
  /** Store lookups of unknown hashes one client address may cause per minute; 0: unlimited. */
  lookupsPerMinute: number;
}

/** Bounded insertion-ordered map: the oldest entry goes when it is full. */
function boundedSet<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.has(key) && map.size >= max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}

/**
 * A token bucket per client address for store lookups of token hashes the service does not
 * know. A lookup takes a token before it goes to the store and gives it back when the hash
 * turns out to be a real token, so only failures spend the budget.
 */
class LookupBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private static readonly maxAddresses = 50_000;

  constructor(private readonly perMinute: number) {}

  /** Seconds until the address may look up again, or 0 after taking a token. */
  take(address: string, now: number): number {
    if (this.perMinute <= 0) return 0;
    const b = this.buckets.get(address) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) / 60_000) * this.perMinute);
    b.at = now;
    boundedSet(this.buckets, address, b, LookupBudget.maxAddresses);
    if (b.tokens < 1) return Math.max(1, Math.ceil(((1 - b.tokens) * 60) / this.perMinute));
    b.tokens -= 1;
    return 0;
  }

  giveBack(address: string): void {
    const b = this.buckets.get(address);
    if (b) b.tokens = Math.min(this.perMinute, b.tokens + 1);
  }
}

/**
 * Verifies tokens. Hits are cached for `cacheSeconds` so the hot paths cost one store
 * round trip (their own); a revocation through this instance takes effect at once, through
 * another instance when its ChangeWatcher sees the `tokens` change feed move (within a
 * second), and within `cacheSeconds` at worst (the feed unreadable).
 *
 * Failed authentication costs the store (almost) nothing: an unknown hash is remembered for
 * `negativeCacheSeconds`, and each client address has a small budget of lookups of unknown
 * hashes (429 before the store beyond it). Hashes that were real tokens once on this instance
 * are always looked up, so a flood from an address cannot lock out the valid tokens used
 * from it; only a token's very first use from a flooding address waits for the budget.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private static readonly maxEntries = 20_000;
  private readonly unknown = new Map<string, number>();
  /** Hashes that were real tokens (value unused); never a reason to admit, only to look up. */
  private readonly known = new Map<string, true>();
  private readonly budget: LookupBudget;

  constructor(
    private readonly tokens: TokenVerifier,
    private readonly adminToken: string | undefined,
    private readonly cacheSeconds: number,
    private readonly failed: FailedAuthOptions = { negativeCacheSeconds: 0, lookupsPerMinute: 0 },
  ) {
    this.budget = new LookupBudget(failed.lookupsPerMinute);
  }

  /** 401 for a missing, unknown, revoked or expired token; 429 when `client` spent its lookup budget. */
  async authenticate(secret: string | undefined, client = 'unknown'): Promise<Principal> {
    if (!secret) throw new UnauthorizedError();
    if (this.adminToken && safeEqual(secret, this.adminToken)) {
      return { role: 'system', name: 'bootstrap-admin', tokenId: 'env:ECS_ADMIN_TOKEN' };
    }
    if (secret.length > 512) throw new UnauthorizedError('invalid token');
    const hash = hashToken(secret);
    const now = Date.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.until < now) {
      const record = await this.lookUp(hash, client, now);
      entry = { record, until: now + this.cacheSeconds * 1000 };
      if (record && this.cacheSeconds > 0) boundedSet(this.cache, hash, entry, Authenticator.maxEntries);
    }
    const t = entry.record;
    if (!t) throw new UnauthorizedError('invalid token');
    if (t.revoked) throw new UnauthorizedError('token revoked');
    if (t.expiresAt && Date.parse(t.expiresAt) <= now) throw new UnauthorizedError('token expired');
    return { role: t.role, tokenId: t.id, name: t.name, orgId: t.orgId, endpointId: t.endpointId };
  }

  /** The store lookup of a hash not in the cache, guarded by the negative cache and the budget. */
  private async lookUp(hash: string, client: string, now: number): Promise<TokenRecord | undefined> {
    const unknownUntil = this.unknown.get(hash);
    if (unknownUntil !== undefined && unknownUntil >= now) return undefined;
    const known = this.known.has(hash);
    if (!known) {
      const wait = this.budget.take(client, now);
      if (wait > 0) throw new TooManyRequestsError(wait, 'too many failed authentications from this address; retry later');
    }
    const record = await this.tokens.findByHash(hash);
    if (record) {
      if (!known) this.budget.giveBack(client);
      boundedSet(this.known, hash, true, Authenticator.maxEntries);
      this.unknown.delete(hash);
    } else if (this.failed.negativeCacheSeconds > 0) {
      boundedSet(this.unknown, hash, now + this.failed.negativeCacheSeconds * 1000, Authenticator.maxEntries * 5);
    }
    return record;
  }

  /** Forgets tokens at once (after revocation). */
  forget(...tokenIds: string[]): void {
    if (tokenIds.length === 0) return;
    const ids = new Set(tokenIds);
    for (const [hash, e] of this.cache) if (e.record && ids.has(e.record.id)) this.cache.delete(hash);
  }

  /** Forgets every cached token (revocations not known one by one). */
  forgetAll(): void {
    this.cache.clear();
  }
}

/**
 * What one principal may reach. Every service asks this object; nothing else decides 403.
 *
 * A person may hold several grants; an operation is judged by the grants whose role the route
 * admits (`admitted`), and a target by the grants whose subtree holds it: a person who is
 * admin of one customer and reader of another may write to the first and only read the second.
 */
export class Access {
  /** The organizations whose subtrees this request may reach (undefined: unrestricted). */
  private readonly roots: readonly string[] | undefined;

  constructor(
    readonly principal: Principal,
    private readonly orgs: OrgTree,
    /** The roles the operation admits (besides `system`); unset: every grant counts. */
    admitted?: readonly Role[],
  ) {
    const p = principal;
    if (p.role === 'anonymous' || (!p.grants && p.role === 'system')) this.roots = undefined;
    else if (!p.grants) this.roots = p.orgId ? [p.orgId] : [];
    else {
      const counted = p.grants.filter((g) => g.role === 'system' || !admitted || admitted.includes(g.role));
      this.roots = counted.some((g) => g.role === 'system')
        ? undefined
        : [...new Set(counted.flatMap((g) => (g.orgId ? [g.orgId] : [])))];
    }
  }

  get role(): Principal['role'] {
    return this.principal.role;
  }

  /** System tokens and perimeter callers of unsecured operations are not limited to a subtree. */
  get unrestricted(): boolean {
    return this.roots === undefined;
  }

  /** The organizations whose subtrees this request may reach (undefined: unrestricted). */
  get grantRoots(): readonly string[] | undefined {
    return this.roots;
  }

  /** The UserKey stamped on records this principal writes. */
  get userKey(): UserKey {
    const { tokenId, person } = this.principal;
    return {
      username: person?.email ?? this.principal.name,
      authenticator: tokenId ? `token:${tokenId}` : person ? `oidc:${person.subject}` : 'none',
    };
  }

  /**
   * 403 unless the org is within the principal's subtree. The message never names the org:
   * it is often the org of a stored record the caller found by another key (API3).
   */
  async assertOrg(orgId: string): Promise<void> {
    if (!this.roots) return;
    for (const root of this.roots) if (await this.orgs.isWithin(orgId, root)) return;
    throw new ForbiddenError(
      this.principal.person
        ? 'the record or organization is outside the organizations your grants cover for this operation'
        : "the record or organization is outside the token's organization subtree",
    );
  }

  /** 403 unless the principal may see a record of this org; an agent only its own endpoint. */
  async assertEndpoint(endpointId: string, orgId: string): Promise<void> {
    if (this.principal.role === 'agent' && this.principal.endpointId !== endpointId) {
      throw new ForbiddenError('an agent token may act only on its own endpoint');
    }
    await this.assertOrg(orgId);
  }

  /** 403 for agent tokens acting on an endpoint other than their own (no store access needed). */
  assertAgentSelf(endpointId: string): void {
    if (this.principal.role === 'agent' && this.principal.endpointId !== endpointId) {
      throw new ForbiddenError('an agent token may act only on its own endpoint');
    }
  }

  /** True when the principal may see the records of `orgId` (a subtree it holds; every org when unrestricted). */
  async covers(orgId: string): Promise<boolean> {
    if (!this.roots) return true;
    for (const root of this.roots) if (await this.orgs.isWithin(orgId, root)) return true;
    return false;
  }

  /**
   * A filter limiting a search to the principal's subtree (undefined when unrestricted), on
   * records whose organization is in `field`; an agent sees only its own endpoint's records.
   */
  async orgFilter(field = 'orgId', endpointField?: string): Promise<Query | undefined> {
    if (this.principal.role === 'agent' && endpointField) {
      return { term: { [endpointField]: this.principal.endpointId ?? '' } };
    }
    if (!this.roots) return undefined;
    if (this.roots.length === 0) return MATCH_NONE;
    // One term per grant (a person may hold a few), never one per organization of a subtree.
    const subtrees = await Promise.all(this.roots.map((root) => this.orgs.subtreeQuery(root, field)));
    return subtrees.length === 1 ? subtrees[0] : { bool: { should: subtrees, minimum_should_match: 1 } };
  }

  /**
   * The scope a criteria names on records whose organization is in `field`: the org, or its
   * subtree when asked; the principal's subtree when it names none. An org outside the
   * principal's subtree → 403. Undefined: no limit (an unrestricted caller naming no org).
   */
  async resolveScope(orgId: string | undefined, includeChildren: boolean, field = 'orgId'): Promise<Query | undefined> {
    if (orgId === undefined) return this.orgFilter(field);
    await this.assertOrg(orgId);
    return includeChildren ? this.orgs.subtreeQuery(orgId, field) : { term: { [field]: orgId } };
  }
}
