/** The tokens index: documents keyed by the SHA-256 of the secret (the secret is never stored). */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, LAST_WRITE_WINS_RETRIES } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { Batcher, type BatcherOptions, type ItemOutcome } from '../../store/batcher.js';
import { itemError } from '../../store/item-errors.js';
import { RecentMap } from '../../recent-map.js';
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

/** One token's last use, as the group commit carries it. */
interface LastUse {
  tokenId: string;
  at: string;
}

/**
 * How concurrent calls on the check-in path are coalesced (store/batcher.ts): verifications
 * into one multi-get, last-use writes into one bulk request (group commit). An instance that
 * restarts under tens of thousands of agents verifies and records them all within a minute.
 */
export const TOKEN_BATCHING: Record<'reads' | 'lastUse', BatcherOptions> = {
  reads: { maxBatch: 500, maxInFlight: 2 },
  // One bulk at a time: nobody waits for a last use, so a queue behind it costs nothing.
  lastUse: { maxBatch: 500, maxInFlight: 1 },
};

/**
 * Token ids whose document id (the hash) this instance learned, for last-use writes: room for
 * every agent an instance holds (100,000 and more) at about 50 bytes an entry (both strings
 * shared with the authenticator's cache). Beyond it the least recently verified go first,
 * and a write for one of them looks its hash up in the group commit's one search.
 */
export const MAX_KNOWN_HASHES = 200_000;

/** The fields authentication needs: a cache keeps these, not the whole document. */
function toTokenRecord(d: TokenDoc): TokenRecord {
  return {
    id: d.id,
    name: d.name,
    ...(d.orgId !== undefined ? { orgId: d.orgId } : {}),
    role: d.role,
    ...(d.endpointId !== undefined ? { endpointId: d.endpointId } : {}),
    ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
    revoked: d.revoked,
  };
}

export class TokenStore implements TokenVerifier {
  private readonly docs: DocStore<TokenDoc>;
  private readonly hashById = new RecentMap<string, string>(MAX_KNOWN_HASHES);
  private readonly lastUse: Batcher<LastUse, void>;

  constructor(ctx: StoreContext, batching = TOKEN_BATCHING) {
    this.docs = new DocStore<TokenDoc>(ctx, 'tokens', 'token', { reads: batching.reads });
    this.lastUse = new Batcher((items) => this.writeLastUses(items), { name: 'group commit token last use', ...batching.lastUse });
  }

  /** One realtime get by hash, the only store call of token verification; concurrent ones travel in one multi-get. */
  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const hit = await this.docs.get(hash);
    if (!hit) return undefined;
    this.hashById.set(hit.doc.id, hash);
    return toTokenRecord(hit.doc);
  }

  /** A token by its id: found by search (the id never changes), then read realtime (its last use is written without a refresh). */
  async findById(tokenId: string): Promise<TokenDoc | undefined> {
    const res = await this.docs.search({ query: { term: { id: tokenId } }, size: 1, _source: false });
    const hash = res.items[0]?.id;
    return hash === undefined ? undefined : (await this.docs.get(hash))?.doc;
  }

  /**
   * Hot-path bookkeeping, called off the request path: sets `lastUsedAt` without a refresh
   * (read by get). Group commit: concurrent calls share one bulk request, and the ids among
   * them whose hash this instance does not know share one search first. Rejects with the
   * error of the token's own update (NotFoundError when its document is gone).
   */
  recordUse(tokenId: string, at: string): Promise<void> {
    return this.lastUse.submit({ tokenId, at });
  }

  private async writeLastUses(items: LastUse[]): Promise<ItemOutcome<void>[]> {
    const hashes = await this.hashesOf(items.map((it) => it.tokenId));
    const operations: estypes.BulkRequest['operations'] = [];
    const owner: number[] = [];
    items.forEach((it, k) => {
      for (const hash of hashes.get(it.tokenId) ?? []) {
        operations.push({ update: { _id: hash, retry_on_conflict: LAST_WRITE_WINS_RETRIES } }, { doc: { lastUsedAt: it.at } });
        owner.push(k);
      }
    });
    const outcomes: ItemOutcome<void>[] = items.map(() => ({ ok: true, value: undefined }));
    if (owner.length === 0) return outcomes;
    const res = await this.docs.bulk(operations, { refresh: false });
    if (res.items.length !== owner.length) {
      const err = new Error(`bulk answered ${res.items.length} items for ${owner.length}`);
      return items.map(() => ({ ok: false, error: err }));
    }
    res.items.forEach((entry, j) => {
      const r = entry.update;
      const k = owner[j];
      if (!r) outcomes[k] = { ok: false, error: new Error('bulk item without an update result') };
      else if (r.error || r.status >= 300) outcomes[k] = { ok: false, error: itemError(r.status, r.error, `token ${items[k].tokenId} not found`) };
    });
    return outcomes;
  }

  /** The document ids of each token id: the hash this instance verified it by, else (one search for all the others) every document of the id. */
  private async hashesOf(tokenIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const unknown = new Set<string>();
    for (const id of tokenIds) {
      const hash = this.hashById.get(id);
      if (hash !== undefined) out.set(id, [hash]);
      else unknown.add(id);
    }
    if (unknown.size === 0) return out;
    const res = await this.docs.search({ query: { terms: { id: [...unknown] } }, size: Math.min(10_000, unknown.size * 10), _source: ['id'] });
    for (const h of res.items) out.set(h.doc.id, [...(out.get(h.doc.id) ?? []), h.id]);
    return out;
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
