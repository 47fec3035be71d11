/**
 * The bounded bookkeeping of token verification and last use holds every agent an instance
 * holds: past 20,000 tokens (and well beyond) a verified token is still answered from the
 * cache and a last use still written at most once a minute; a full map lets go of its least
 * recently set entry, never of everything at once.
 */
import { expect } from 'chai';
import { RecentMap } from '../../src/recent-map.js';
import { Authenticator, MAX_VERIFIED_TOKENS } from '../../src/http/auth.js';
import { hashToken, type TokenCache, type TokenRecord, type TokenVerifier } from '../../src/access/tokens.js';
import { LAST_USE_INTERVAL_MS, MAX_LAST_USE_ENTRIES, TokenService } from '../../src/resources/tokens/service.js';
import { MAX_KNOWN_HASHES, type TokenStore } from '../../src/resources/tokens/store.js';
import type { OrganizationService } from '../../src/resources/organizations/service.js';
import type { ChangeFeedStore } from '../../src/store/change-feed.js';

/** Agents one instance must hold, with room to spare. */
const AGENTS = 100_000;

/** A verifier over `count` agent tokens (secret `s<i>`), counting its lookups. */
function verifierOf(count: number): TokenVerifier & { lookups: number } {
  const byHash = new Map<string, TokenRecord>();
  for (let i = 0; i < count; i++) byHash.set(hashToken(`s${i}`), { id: `t${i}`, name: `agent ${i}`, role: 'agent', endpointId: `e${i}`, orgId: 'org', revoked: false });
  const v = {
    lookups: 0,
    findByHash(hash: string): Promise<TokenRecord | undefined> {
      v.lookups += 1;
      return Promise.resolve(byHash.get(hash));
    },
  };
  return v;
}

describe('token bookkeeping: bounded for every agent an instance holds', function () {
  this.timeout(60_000);

  describe('RecentMap', () => {
    it('lets go of the least recently set entry when full, one at a time', () => {
      const m = new RecentMap<string, number>(3);
      m.set('a', 1);
      m.set('b', 2);
      m.set('c', 3);
      m.set('a', 4); // set again: now the newest
      m.set('d', 5);
      expect([...m.entries()]).to.deep.equal([
        ['c', 3],
        ['a', 4],
        ['d', 5],
      ]);
      expect(m.has('b')).to.equal(false);
      expect(m.size).to.equal(3);
    });

    it('drops expired entries from the oldest end only', () => {
      const m = new RecentMap<string, number>(10);
      for (const [k, at] of [['a', 1], ['b', 2], ['c', 3], ['d', 9]] as const) m.set(k, at);
      m.dropOldestWhile((at) => at < 3);
      expect([...m.entries()].map(([k]) => k)).to.deep.equal(['c', 'd']);
    });

    it('refuses a bound below one', () => {
      expect(() => new RecentMap(0)).to.throw();
    });
  });

  it('sizes every token map for at least 100,000 agents', () => {
    expect(MAX_VERIFIED_TOKENS).to.be.at.least(AGENTS);
    expect(MAX_KNOWN_HASHES).to.be.at.least(AGENTS);
    expect(MAX_LAST_USE_ENTRIES).to.be.at.least(AGENTS);
  });

  it('answers 100,000 verified agent tokens from the cache: one lookup each, not one per use', async () => {
    const v = verifierOf(AGENTS);
    const auth = new Authenticator(v, undefined, 300);
    for (let i = 0; i < AGENTS; i++) await auth.authenticate(`s${i}`);
    expect(v.lookups).to.equal(AGENTS);
    for (let i = 0; i < AGENTS; i++) expect((await auth.authenticate(`s${i}`)).tokenId).to.equal(`t${i}`);
    expect(v.lookups).to.equal(AGENTS);
  });

  it('past its bound forgets the least recently verified tokens only', async () => {
    const over = 1000;
    const v = verifierOf(MAX_VERIFIED_TOKENS + over);
    const auth = new Authenticator(v, undefined, 300);
    for (let i = 0; i < MAX_VERIFIED_TOKENS + over; i++) await auth.authenticate(`s${i}`);
    const before = v.lookups;
    // The newest MAX_VERIFIED_TOKENS are all still cached.
    for (let i = over; i < MAX_VERIFIED_TOKENS + over; i += 97) await auth.authenticate(`s${i}`);
    expect(v.lookups).to.equal(before);
    // The oldest were let go of, and are looked up again.
    await auth.authenticate('s0');
    expect(v.lookups).to.equal(before + 1);
  });

  it('writes the last use of 100,000 tokens once a minute each, and not again within the minute', () => {
    let writes = 0;
    const recordUse = (): Promise<void> => {
      writes += 1;
      return Promise.resolve();
    };
    const store = { recordUse } as unknown as TokenStore;
    const cache: TokenCache = { forget: () => undefined, forgetAll: () => undefined };
    const service = new TokenService(store, {} as OrganizationService, cache, {} as ChangeFeedStore);
    const t0 = 1_800_000_000_000;
    for (let i = 0; i < AGENTS; i++) expect(service.recordUse(`t${i}`, t0 + i / 10)).to.equal(true);
    expect(writes).to.equal(AGENTS);
    for (let i = 0; i < AGENTS; i++) expect(service.recordUse(`t${i}`, t0 + 20_000 + i / 10)).to.equal(false);
    expect(writes).to.equal(AGENTS);
    for (let i = 0; i < AGENTS; i++) service.recordUse(`t${i}`, t0 + LAST_USE_INTERVAL_MS + 10_000 + i / 10);
    expect(writes).to.equal(2 * AGENTS);
  });
});
