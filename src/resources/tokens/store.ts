/** The tokens index: documents keyed by the SHA-256 of the secret (the secret is never stored). */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { TokenRecord, TokenVerifier } from '../../http/auth.js';
import type { UserKey } from '../../domain.js';

export interface TokenDoc extends TokenRecord {
  createdAt: string;
  createdBy: UserKey;
}

export class TokenStore implements TokenVerifier {
  private readonly docs: DocStore<TokenDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<TokenDoc>(ctx, 'tokens', 'token');
  }

  /** One realtime get by hash: the only store call of token verification. */
  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const hit = await this.docs.get(hash);
    return hit?.doc;
  }

  async create(hash: string, doc: TokenDoc): Promise<void> {
    await this.docs.create(hash, doc);
  }

  /** Marks every document of a token id revoked; false when there is none. */
  async revoke(tokenId: string): Promise<boolean> {
    const res = await this.docs.search({ query: { term: { id: tokenId } }, size: 10 });
    await this.revokeAll(res.items.map((h) => h.id));
    return res.items.length > 0;
  }

  /** Revokes every agent token bound to an endpoint (when the endpoint is deleted). */
  async revokeForEndpoint(endpointId: string): Promise<string[]> {
    const res = await this.docs.search({
      query: { bool: { filter: [{ term: { endpointId } }, { term: { revoked: false } }] } },
      size: 1000,
    });
    await this.revokeAll(res.items.map((h) => h.id));
    return res.items.map((h) => h.doc.id);
  }

  /** Marks documents revoked, then waits once for them all to be searchable. */
  private async revokeAll(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    for (const hash of hashes) await this.docs.patch(hash, { revoked: true }, { refresh: false });
    await this.docs.visible();
  }
}
