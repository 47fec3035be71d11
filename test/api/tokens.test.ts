/**
 * Tokens on the check-in path, through HTTP against the real store: the first check-ins of
 * many agents at once (an instance taking its agents back after a restart) verify their tokens
 * in a few multi-gets and write their last use in a few bulk requests, not one request per
 * agent; the last use is still written (GET /admin/tokens/{id}) and at most once a minute per
 * token; and a token this instance never verified still has its last use written.
 */
import { expect } from 'chai';
import type { DiagnosticResult } from '@elastic/elasticsearch';
import { uid, useTenants, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { agentDoc, createEndpointDocs } from '../helpers/endpoint-store.js';
import { longPoll, SimSocket } from '../helpers/agent-channel.js';
import { retryPause, waitFor } from '../helpers/wait.js';
import { aliasName } from '../../src/store/client.js';
import { TokenStore } from '../../src/resources/tokens/store.js';
import { hashToken } from '../../src/access/tokens.js';

const AGENTS = 200;

interface TokenView {
  id: string;
  lastUsedAt?: string;
}

/** Requests to the tokens index, by kind, and the last-use updates they acknowledged. */
interface TokenRequests {
  /** Verification reads: single gets and multi-gets. */
  reads: number;
  /** Last-use writes: single updates and bulk requests. */
  writes: number;
  searches: number;
  /** Update items acknowledged (one per single update, one per bulk item). */
  updated: number;
}

/**
 * Counts the app's requests to the tokens index (the store client's own diagnostics) until stopped.
 * `only`: bulks count only with their items on these documents (other tokens' last use, still
 * being written for earlier requests, is not this count's).
 */
function countTokenRequests(t: TestApp, only?: ReadonlySet<string>): { seen: TokenRequests; stop(): void } {
  const tokensPath = `/${aliasName(t.server.store.prefix, 'tokens')}/`;
  const seen: TokenRequests = { reads: 0, writes: 0, searches: 0, updated: 0 };
  const onResponse = (_err: unknown, result: DiagnosticResult | null): void => {
    const path = result?.meta.request.params.path ?? '';
    if (!path.startsWith(tokensPath)) return;
    const op = path.slice(tokensPath.length);
    if (op.startsWith('_mget') || op.startsWith('_doc/')) seen.reads += 1;
    else if (op.startsWith('_search') || op.startsWith('_msearch')) seen.searches += 1;
    else if (op.startsWith('_update/')) {
      seen.writes += 1;
      seen.updated += 1;
    } else if (op.startsWith('_bulk')) {
      const items = (result?.body as { items?: Record<string, { _id?: string }>[] } | undefined)?.items ?? [];
      const counted = only ? items.filter((it) => Object.values(it).some((r) => r._id !== undefined && only.has(r._id))) : items;
      if (counted.length === 0) return;
      seen.writes += 1;
      seen.updated += counted.length;
    }
  };
  const diagnostic = t.server.store.client.diagnostic;
  diagnostic.on('response', onResponse);
  return { seen, stop: () => void diagnostic.off('response', onResponse) };
}

/** One check-in (a long poll answered at once), sent again after a shed (503) as an agent does. */
async function checkIn(api: Api): Promise<void> {
  for (;;) {
    const res = await longPoll(api, 0);
    if (res.status === 200) return;
    expect(res.status, res.text).to.equal(503);
    await retryPause(Number(res.headers.get('retry-after') ?? 0) * 100 + 100);
  }
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('tokens on the check-in path: verification and last use in few store requests', function () {
  this.timeout(180_000);
  // Every agent here comes from one address, under the default per-address budget of failed
  // lookups: the first uses of real tokens never spend it, so none is refused (docs/adr/0128).
  const w = useTenants({ ECS_AUTH_FAILURES_PER_MINUTE: '60' });
  let agents: { id: string; hash: string; api: Api }[];

  before(async () => {
    const t = w.t;
    const endpointIds = Array.from({ length: AGENTS }, () => uid('ep'));
    await createEndpointDocs(t.server.store, endpointIds.map((id) => agentDoc(id, w.orgA)));
    agents = [];
    for (let k = 0; k < AGENTS; k += 20) {
      const minted = await Promise.all(
        endpointIds.slice(k, k + 20).map(async (endpointId) => {
          const res = await t.admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('agent'), role: 'agent', orgId: w.orgA, endpointId });
          expect(res.status, res.text).to.equal(201);
          return { id: res.body.id, hash: hashToken(res.body.token), api: t.world.as(res.body.token) };
        }),
      );
      agents.push(...minted);
    }
  });

  it('verifies the first check-ins of many agents in a few multi-gets and writes their last use in a few bulks', async () => {
    const t = w.t;
    const started = Date.now();
    const count = countTokenRequests(t);
    try {
      await Promise.all(agents.map((a) => checkIn(a.api)));
      // The last-use writes are off the request path: done once every agent's update was acknowledged.
      const written = await waitFor(async () => count.seen.updated, (n) => n >= AGENTS, 30_000);
      expect(written.met, JSON.stringify(count.seen)).to.equal(true);
    } finally {
      count.stop();
    }
    // One request per agent would be AGENTS reads and AGENTS writes. How many items share a
    // request depends on how the check-ins arrive (a loaded machine spreads them over more turns
    // of the event loop), so the bound is "clearly shared", not an exact count.
    expect(count.seen.reads, JSON.stringify(count.seen)).to.be.within(1, AGENTS / 2);
    expect(count.seen.writes, JSON.stringify(count.seen)).to.be.within(1, AGENTS / 2);
    // Every token was verified here, so no write had to search for its document.
    expect(count.seen.searches, JSON.stringify(count.seen)).to.equal(0);

    for (const a of [agents[0], agents[AGENTS / 2], agents[AGENTS - 1]]) {
      const res = await t.admin.get<TokenView>(`/admin/tokens/${a.id}`);
      expect(res.status, res.text).to.equal(200);
      expect(Date.parse(String(res.body.lastUsedAt))).to.be.within(started - 1000, Date.now());
    }
  });

  it('checks in again within the minute without a store request: verified from the cache, last use not written again', async () => {
    const t = w.t;
    const before = await t.admin.get<TokenView>(`/admin/tokens/${agents[0].id}`);
    const writesBefore = metricValue((await t.anon.get<string>('/metrics')).body, 'ecs_token_last_use_writes_total');
    const count = countTokenRequests(t);
    try {
      await Promise.all(agents.map((a) => checkIn(a.api)));
    } finally {
      count.stop();
    }
    expect(count.seen, JSON.stringify(count.seen)).to.deep.equal({ reads: 0, writes: 0, searches: 0, updated: 0 });
    // Uses are noted when each request ends, before its answer: no write was started.
    expect(metricValue((await t.anon.get<string>('/metrics')).body, 'ecs_token_last_use_writes_total')).to.equal(writesBefore);
    expect((await t.admin.get<TokenView>(`/admin/tokens/${agents[0].id}`)).body.lastUsedAt).to.equal(before.body.lastUsedAt);
  });

  it('a WebSocket check-in notes its token\'s use as a request does: last use written', async () => {
    const t = w.t;
    const endpointId = uid('ep');
    await createEndpointDocs(t.server.store, [agentDoc(endpointId, w.orgA)]);
    const minted = await t.admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('agent'), role: 'agent', orgId: w.orgA, endpointId });
    expect(minted.status, minted.text).to.equal(201);
    const sock = await SimSocket.open(t.url, minted.body.token);
    try {
      // Only the socket used this token: its last use can come from nothing else.
      const used = await waitFor(async () => (await t.admin.get<TokenView>(`/admin/tokens/${minted.body.id}`)).body.lastUsedAt, (at) => at !== undefined, 5000);
      expect(used.met, 'lastUsedAt written after a WebSocket check-in').to.equal(true);
    } finally {
      sock.close();
    }
  });

  it('writes the last use of tokens this instance never verified: one search for their documents, one bulk', async () => {
    const t = w.t;
    // A store of its own knows no hash, as after its bound let go of them.
    const store = new TokenStore(t.server.store);
    const some = agents.slice(0, 20);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const count = countTokenRequests(t, new Set(some.map((a) => a.hash)));
    try {
      await Promise.all([...some.map((a) => store.recordUse(a.id, at)), store.recordUse(uid('no-such-token'), at)]);
    } finally {
      count.stop();
    }
    expect(count.seen, JSON.stringify(count.seen)).to.deep.equal({ reads: 0, writes: 1, searches: 1, updated: some.length });
    for (const a of [some[0], some[some.length - 1]]) {
      expect((await t.admin.get<TokenView>(`/admin/tokens/${a.id}`)).body.lastUsedAt).to.equal(at);
    }
  });
});
