/** The tokens index: documents keyed by the SHA-256 of the secret (the secret is never stored). */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { TokenRecord, TokenVerifier } from '../../access/tokens.js';
import type { UserKey } from '../../domain.js';

export interface TokenDoc extends TokenRecord {
  createdAt: string;
  createdBy: UserKey;
  /** Extension: the token's last use, coarse (at most one write a minute per instance). */
  lastUsedAt?: string;
  /** Extension: when and by whom it was revoked (the first revocation). */
  revokedAt?: string;
  revokedBy?: UserKey;
  /** Extension: why, when no caller revoked it by name (its endpoint was deleted). */
  revokedReason?: string;
}

/** What a revocation records on the token. */
export interface Revocation {
  revokedAt: string;
  revokedBy?: UserKey;
  revokedReason?: string;
}

/** Token ids whose document id (the hash) this instance learned, for last-use writes. */
const MAX_KNOWN_HASHES = 20_000;

export class TokenStore implements TokenVerifier {
  private readonly docs: DocStore<TokenDoc>;
  private readonly hashById = new Map<string, string>();
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<TokenDoc>(ctx, 'tokens', 'token');
  }

  /** One realtime get by hash: the only store call of token verification. */
  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const hit = await this.docs.get(hash);
    if (hit) {
      if (this.hashById.size >= MAX_KNOWN_HASHES) this.hashById.clear();
      this.hashById.set(hit.doc.id, hash);
    }
    return hit?.doc;
  }

  /** A token by its id: found by search (the id never changes), then read realtime (its last use is written without a refresh). */
  async findById(tokenId: string): Promise<TokenDoc | undefined> {
    const res = await this.docs.search({ query: { term: { id: tokenId } }, size: 1, _source: false });
    const hash = res.items[0]?.id;
    return hash === undefined ? undefined : (await this.docs.get(hash))?.doc;
  }

  /**
   * Hot-path bookkeeping, called off the request path: sets `lastUsedAt` without a refresh
   * (read by get). The document id is the hash this instance verified the token by; a token
   * verified elsewhere is looked up by its id once.
   */
  async recordUse(tokenId: string, at: string): Promise<void> {
    const hashes = this.hashById.has(tokenId)
      ? [this.hashById.get(tokenId) as string]
      : (await this.docs.search({ query: { term: { id: tokenId } }, size: 10 })).items.map((h) => h.id);
    for (const hash of hashes) await this.docs.patch(hash, { lastUsedAt: at }, { refresh: false });
  }

  async create(hash: string, doc: TokenDoc): Promise<void> {
    await this.docs.create(hash, doc);
  }

  /** Marks every document of a token id revoked (a revoked one keeps its first who/when); false when there is none. */
  async revoke(tokenId: string, how: Revocation): Promise<boolean> {
    const res = await this.docs.search({ query: { term: { id: tokenId } }, size: 10 });
    await this.revokeAll(
      res.items.filter((h) => !h.doc.revoked).map((h) => h.id),
      how,
    );
    return res.items.length > 0;
  }

  /** Revokes every agent token bound to an endpoint (when the endpoint is deleted). */
  async revokeForEndpoint(endpointId: string, how: Revocation): Promise<string[]> {
    const res = await this.docs.search({
      query: { bool: { filter: [{ term: { endpointId } }, { term: { revoked: false } }] } },
      size: 1000,
    });
    await this.revokeAll(
      res.items.map((h) => h.id),
      how,
    );
    return res.items.map((h) => h.doc.id);
  }

  /** Marks documents revoked, then waits once for them all to be searchable. */
  private async revokeAll(hashes: string[], how: Revocation): Promise<void> {
    if (hashes.length === 0) return;
    for (const hash of hashes) await this.docs.patch(hash, { revoked: true, ...how }, { refresh: false });
    await this.docs.visible();
  }
}
