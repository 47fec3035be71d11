/**
 * Finding the principal of a request: the opaque token in `x-auth-token`, verified against the
 * token store with a cache, a negative cache and a per-address budget of failed lookups. What
 * the principal may do is the permission model's (src/access/).
 */
import crypto from 'node:crypto';
import { TooManyRequestsError, UnauthorizedError } from '../errors.js';
import type { Principal } from '../access/principal.js';
import { tokenDigest, type TokenCache, type TokenRecord, type TokenVerifier } from '../access/tokens.js';
import { RecentMap } from '../recent-map.js';

export const TOKEN_HEADER = 'x-auth-token';

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
 * know. Only a lookup that finds no token spends from it (docs/adr/0128): the first uses of real
 * tokens from one address — a fleet behind one NAT coming back after a restart — never wait
 * for it. A burst of bad lookups drives the bucket into debt, and the address then waits in
 * proportion to what it spent.
 */
class LookupBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private static readonly maxAddresses = 50_000;

  constructor(private readonly perMinute: number) {}

  /** Seconds until the address may look up unknown hashes again; 0 while it may. */
  wait(address: string, now: number): number {
    if (this.perMinute <= 0) return 0;
    const b = this.refilled(address, now);
    return b.tokens < 1 ? Math.max(1, Math.ceil(((1 - b.tokens) * 60) / this.perMinute)) : 0;
  }

  /** A lookup from the address found no token. The debt is bounded by one more minute's budget. */
  spend(address: string, now: number): void {
    if (this.perMinute <= 0) return;
    const b = this.refilled(address, now);
    b.tokens = Math.max(-this.perMinute, b.tokens - 1);
  }

  private refilled(address: string, now: number): { tokens: number; at: number } {
    const b = this.buckets.get(address) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) / 60_000) * this.perMinute);
    b.at = now;
    boundedSet(this.buckets, address, b, LookupBudget.maxAddresses);
    return b;
  }
}

/**
 * Verified tokens one instance keeps: room for every agent it holds (100,000 and more) at
 * about 300 bytes a cached token (its hash, the record's few fields) and 50 a known hash.
 * Beyond it the least recently verified go first, one at a time.
 */
export const MAX_VERIFIED_TOKENS = 200_000;
/** Unknown hashes answered 401 without a lookup: a flood's, so bounded on their own. */
const MAX_UNKNOWN_HASHES = 100_000;

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
export class Authenticator implements TokenCache {
  private readonly cache = new RecentMap<string, CacheEntry>(MAX_VERIFIED_TOKENS);
  private readonly unknown = new Map<string, number>();
  /** Hashes that were real tokens (value unused); never a reason to admit, only to look up. */
  private readonly known = new RecentMap<string, true>(MAX_VERIFIED_TOKENS);
  private readonly budget: LookupBudget;
  /** The bootstrap admin token's digest, compared in constant time with each request's. */
  private readonly adminDigest: Buffer | undefined;

  constructor(
    private readonly tokens: TokenVerifier,
    adminToken: string | undefined,
    private readonly cacheSeconds: number,
    private readonly failed: FailedAuthOptions = { negativeCacheSeconds: 0, lookupsPerMinute: 0 },
  ) {
    this.budget = new LookupBudget(failed.lookupsPerMinute);
    this.adminDigest = adminToken ? tokenDigest(adminToken) : undefined;
  }

  /** 401 for a missing, unknown, revoked or expired token; 429 when `client` spent its lookup budget. */
  async authenticate(secret: string | undefined, client = 'unknown'): Promise<Principal> {
    if (!secret) throw new UnauthorizedError();
    // One hash per request: the admin comparison (equal-length digests, constant time) and the cache key.
    const digest = tokenDigest(secret);
    if (this.adminDigest && crypto.timingSafeEqual(digest, this.adminDigest)) {
      return { role: 'system', name: 'bootstrap-admin', tokenId: 'env:ECS_ADMIN_TOKEN' };
    }
    if (secret.length > 512) throw new UnauthorizedError('invalid token');
    const hash = digest.toString('hex');
    const now = Date.now();
    // Entries are set (nearly) in the order they expire: the expired ones are the oldest.
    this.cache.dropOldestWhile((e) => e.until < now);
    let entry = this.cache.get(hash);
    if (!entry || entry.until < now) {
      const record = await this.lookUp(hash, client, now);
      entry = { record, until: now + this.cacheSeconds * 1000 };
      if (record && this.cacheSeconds > 0) this.cache.set(hash, entry);
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
      const wait = this.budget.wait(client, now);
      if (wait > 0) throw new TooManyRequestsError(wait, 'too many failed authentications from this address; retry later');
    }
    const record = await this.tokens.findByHash(hash);
    if (!record) this.budget.spend(client, now);
    if (record) {
      this.known.set(hash, true);
      this.unknown.delete(hash);
    } else if (this.failed.negativeCacheSeconds > 0) {
      boundedSet(this.unknown, hash, now + this.failed.negativeCacheSeconds * 1000, MAX_UNKNOWN_HASHES);
    }
    return record;
  }

  /** Forgets tokens at once (after revocation). */
  forget(...tokenIds: string[]): void {
    if (tokenIds.length === 0) return;
    const ids = new Set(tokenIds);
    for (const [hash, e] of this.cache.entries()) if (e.record && ids.has(e.record.id)) this.cache.delete(hash);
  }

  /** Forgets every cached token (revocations not known one by one). */
  forgetAll(): void {
    this.cache.clear();
  }
}

