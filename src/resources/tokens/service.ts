/** Minting and revoking tokens (the lifecycle spec section 5 leaves open). */
import crypto from 'node:crypto';
import { hashToken, newTokenSecret, type TokenRecord } from '../../access/tokens.js';
import type { Access } from '../../access/access.js';
import type { TokenCache } from '../../access/tokens.js';
import type { Role } from '../../access/principal.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import type { OrganizationService } from '../organizations/service.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { RecentMap } from '../../recent-map.js';
import type { TokenDoc, TokenStore } from './store.js';

/** A token as the API shows it (extension): never its secret or hash. */
export type TokenView = TokenDoc;

/** At most one last-use write per token and instance in this time. */
export const LAST_USE_INTERVAL_MS = 60_000;
/**
 * Tokens whose last write this instance remembers: only those written within the interval
 * matter (older entries are dropped as they expire), so this bounds the tokens used in one
 * minute — room for 100,000 agents and more at under 100 bytes an entry. Past it the token
 * written longest ago is forgotten first (its next use writes a little early), never all.
 */
export const MAX_LAST_USE_ENTRIES = 200_000;

export interface TokenCreate {
  name: string;
  orgId?: string;
  role: Role;
  endpointId?: string;
  expiresAt?: Date;
}

/** A minted token: its record (never revoked yet) and, once, its secret. */
export interface IssuedToken extends Omit<TokenRecord, 'revoked'> {
  createdAt: string;
  /** The secret, shown once. */
  token: string;
}

export class TokenService {
  /** Called once a token is revoked (its jobs are cancelled); set by the service container. Its failure fails the revocation, which a retry repeats. */
  onRevoked?: (tokenId: string) => Promise<void>;

  /** When this instance last wrote each token's last use. */
  private readonly lastUseWritten = new RecentMap<string, number>(MAX_LAST_USE_ENTRIES);

  constructor(
    private readonly store: TokenStore,
    private readonly orgs: OrganizationService,
    private readonly authenticator: TokenCache,
    private readonly feed: ChangeFeedStore,
  ) {}

  /** Mints a token; the secret is returned once and only its hash is stored. */
  async create(input: TokenCreate, access: Access): Promise<IssuedToken> {
    if (input.role !== 'system' && !input.orgId) throw new BadRequestError('body.orgId: required for role ' + input.role);
    if (input.role === 'agent' && !input.endpointId) throw new BadRequestError('body.endpointId: required for role agent');
    if (input.role !== 'agent' && input.endpointId) throw new BadRequestError('body.endpointId: only agent tokens are bound to an endpoint');
    if (input.orgId) await this.orgs.assertExists(input.orgId);
    const secret = newTokenSecret();
    const now = new Date().toISOString();
    const doc = {
      id: crypto.randomUUID(),
      name: input.name,
      ...(input.orgId ? { orgId: input.orgId } : {}),
      role: input.role,
      ...(input.endpointId ? { endpointId: input.endpointId } : {}),
      ...(input.expiresAt ? { expiresAt: input.expiresAt.toISOString() } : {}),
      revoked: false,
      createdAt: now,
      createdBy: access.userKey,
    };
    await this.store.create(hashToken(secret), doc);
    const { revoked: _revoked, createdBy: _createdBy, ...shown } = doc;
    return { ...shown, token: secret };
  }

  /** GET /admin/tokens/{id} (extension): the token record with its last use and revocation. */
  async get(tokenId: string): Promise<TokenView> {
    const doc = await this.store.findById(tokenId);
    if (!doc) throw new NotFoundError(`token ${tokenId} not found`);
    return doc;
  }

  /**
   * Notes a use of a token: writes `lastUsedAt` at most once per LAST_USE_INTERVAL_MS per token
   * and instance, in the background (never awaited by the request; concurrent writes share one
   * bulk request). True when a write was started. Bootstrap tokens (no record) are not recorded.
   */
  recordUse(tokenId: string, now = Date.now()): boolean {
    if (tokenId.startsWith('env:')) return false;
    this.lastUseWritten.dropOldestWhile((at) => now - at >= LAST_USE_INTERVAL_MS);
    const last = this.lastUseWritten.get(tokenId);
    if (last !== undefined && now - last < LAST_USE_INTERVAL_MS) return false;
    this.lastUseWritten.set(tokenId, now);
    // A failed write is forgotten, so the next use tries again.
    void this.store.recordUse(tokenId, new Date(now).toISOString()).catch(() => this.lastUseWritten.delete(tokenId));
    return true;
  }

  /**
   * Revokes a token: refused here at once, by the other instances once they read it on the
   * change feed. When the feed write fails the revocation is saved and still announced (the
   * feed's outbox re-sends it) and the answer is 503; a retry revokes (idempotently) again.
   * The token keeps who revoked it and when (the first revocation's).
   */
  async revoke(tokenId: string, access?: Access): Promise<void> {
    const how = { revokedAt: new Date().toISOString(), ...(access ? { revokedBy: access.userKey } : {}) };
    if (!(await this.store.revoke(tokenId, how))) throw new NotFoundError(`token ${tokenId} not found`);
    this.authenticator.forget(tokenId);
    await this.feed.append('tokens', [tokenId]);
    await this.onRevoked?.(tokenId);
  }

  /** Revokes the agent tokens of a deleted endpoint. */
  async revokeForEndpoint(endpointId: string): Promise<void> {
    const ids = await this.store.revokeForEndpoint(endpointId, {
      revokedAt: new Date().toISOString(),
      revokedReason: `endpoint ${endpointId} deleted`,
    });
    if (ids.length === 0) return;
    this.authenticator.forget(...ids);
    await this.feed.append('tokens', ids);
  }
}
