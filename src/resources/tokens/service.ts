/** Minting and revoking tokens (the lifecycle spec section 5 leaves open). */
import crypto from 'node:crypto';
import { hashToken, newTokenSecret, type Access, type Authenticator, type Role, type TokenRecord } from '../../http/auth.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import type { OrganizationService } from '../organizations/service.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { TokenStore } from './store.js';

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
  constructor(
    private readonly store: TokenStore,
    private readonly orgs: OrganizationService,
    private readonly authenticator: Authenticator,
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

  /**
   * Revokes a token: refused here at once, by the other instances once they see the change
   * feed move. A failed bump answers 503; the revocation is idempotent, so a retry bumps again.
   */
  async revoke(tokenId: string): Promise<void> {
    if (!(await this.store.revoke(tokenId))) throw new NotFoundError(`token ${tokenId} not found`);
    this.authenticator.forget(tokenId);
    await this.feed.bump('tokens', [tokenId]);
  }

  /** Revokes the agent tokens of a deleted endpoint. */
  async revokeForEndpoint(endpointId: string): Promise<void> {
    const ids = await this.store.revokeForEndpoint(endpointId);
    if (ids.length === 0) return;
    this.authenticator.forget(...ids);
    await this.feed.bump('tokens', ids);
  }
}
