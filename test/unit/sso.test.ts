/**
 * Single sign-on's rules without a store or an identity provider: the roles claim → grants,
 * the cross-site rule for cookie-carried writes, grants → what a request may reach, and login
 * sessions' idle and absolute expiry and their rechecks at the provider under an injected
 * clock, and the seal of the provider's refresh tokens.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { grantsFromClaim } from '../../src/http/oidc-claims.js';
import { csrfRefusal, csrfTokenFor, signOutRefusal } from '../../src/http/csrf.js';
import { Access, type OrgTree } from '../../src/access/access.js';
import { admits } from '../../src/access/principal.js';
import { consoleReturnPath, RefreshTokenSeal } from '../../src/http/sso.js';
import { sessionExpiry } from '../../src/resources/sessions/model.js';
import { SessionService } from '../../src/resources/sessions/service.js';
import { principalOf } from '../../src/resources/sessions/events.js';
import type { SessionStore } from '../../src/resources/sessions/store.js';
import type { SessionDoc, SessionRecheck, SessionRechecker } from '../../src/resources/sessions/model.js';
import type { ChangeFeedStore } from '../../src/store/change-feed.js';
import type { AuditEvent } from '../../src/resources/audit/model.js';
import { createLogger } from '../../src/log.js';
import { ForbiddenError, UnauthorizedError } from '../../src/errors.js';

describe('Roles claim → grants', () => {
  it('maps role@org values of an array claim, in order, without duplicates', () => {
    const r = grantsFromClaim(['admin@acme', 'reader@beta', 'admin@acme'], { allowSystem: false });
    expect(r.grants).to.deep.equal([
      { role: 'admin', orgId: 'acme' },
      { role: 'reader', orgId: 'beta' },
    ]);
    expect(r.ignored).to.deep.equal([]);
  });

  it('accepts one string of values separated by spaces or commas', () => {
    expect(grantsFromClaim('admin@acme, reader@beta', { allowSystem: false }).grants).to.have.length(2);
  });

  it('takes a group’s full path as the group’s name', () => {
    const r = grantsFromClaim(['/admin@acme', '/ecs/reader@beta', '/', '/owner@acme'], { allowSystem: false });
    expect(r.grants).to.deep.equal([
      { role: 'admin', orgId: 'acme' },
      { role: 'reader', orgId: 'beta' },
    ]);
    expect(r.ignored).to.deep.equal(['/', 'owner@acme']);
  });

  it('ignores unknown roles, malformed values and agent', () => {
    const r = grantsFromClaim(['owner@acme', 'admin@', '@acme', 'admin', 'agent@acme', 'admin@a/b', 7], { allowSystem: false });
    expect(r.grants).to.deep.equal([]);
    expect(r.ignored).to.have.length(7);
  });

  it('grants system only when the operator allows it', () => {
    expect(grantsFromClaim(['system'], { allowSystem: false }).grants).to.deep.equal([]);
    expect(grantsFromClaim(['system'], { allowSystem: true }).grants).to.deep.equal([{ role: 'system' }]);
  });

  it('grants nothing for an absent or non-list claim', () => {
    expect(grantsFromClaim(undefined, { allowSystem: true }).grants).to.deep.equal([]);
    expect(grantsFromClaim({ admin: 'acme' }, { allowSystem: true }).grants).to.deep.equal([]);
  });
});

describe('Cross-site rule for cookie-carried requests', () => {
  const origin = 'https://ecs.example.com';
  const token = csrfTokenFor('secret-of-the-session');
  const write = { method: 'POST', origin, secFetchSite: 'same-origin', csrfHeader: token };

  it('lets safe methods pass whatever their origin', () => {
    expect(csrfRefusal({ method: 'GET', origin: 'https://evil.example', secFetchSite: 'cross-site', csrfHeader: '' }, origin, token)).to.equal(undefined);
  });

  it('lets a same-origin write with the session’s token pass', () => {
    expect(csrfRefusal(write, origin, token)).to.equal(undefined);
    expect(csrfRefusal({ ...write, secFetchSite: '' }, origin, token)).to.equal(undefined);
    expect(csrfRefusal({ ...write, origin: '' }, origin, token)).to.equal(undefined);
  });

  it('refuses a cross-site or same-site write, and one with neither Origin nor Fetch Metadata', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(csrfRefusal({ ...write, method: m, origin: 'https://evil.example', secFetchSite: 'cross-site' }, origin, token)).to.match(/same origin/);
    }
    expect(csrfRefusal({ ...write, origin: 'https://other.ecs.example.com', secFetchSite: 'same-site' }, origin, token)).to.match(/same origin/);
    expect(csrfRefusal({ ...write, origin: '', secFetchSite: '' }, origin, token)).to.match(/same origin/);
    expect(csrfRefusal({ ...write, origin: 'null', secFetchSite: '' }, origin, token)).to.match(/same origin/);
  });

  it('refuses a same-origin write without the token, or with another session’s', () => {
    expect(csrfRefusal({ ...write, csrfHeader: '' }, origin, token)).to.match(/X-CSRF-Token/);
    expect(csrfRefusal({ ...write, csrfHeader: csrfTokenFor('another session') }, origin, token)).to.match(/X-CSRF-Token/);
  });

  it('lets a sign-out pass without the token unless a browser marked it as coming from elsewhere', () => {
    const signOut = { method: 'POST', origin: '', secFetchSite: '' };
    expect(signOutRefusal(signOut, origin)).to.equal(undefined);
    expect(signOutRefusal({ ...signOut, origin }, origin)).to.equal(undefined);
    expect(signOutRefusal({ ...signOut, secFetchSite: 'same-origin' }, origin)).to.equal(undefined);
    expect(signOutRefusal({ ...signOut, secFetchSite: 'none' }, origin)).to.equal(undefined);
    expect(signOutRefusal({ ...signOut, origin: 'https://evil.example' }, origin)).to.match(/another site/);
    expect(signOutRefusal({ ...signOut, origin: 'null' }, origin)).to.match(/another site/);
    expect(signOutRefusal({ ...signOut, secFetchSite: 'cross-site' }, origin)).to.match(/another site/);
    expect(signOutRefusal({ ...signOut, origin: 'https://other.ecs.example.com', secFetchSite: 'same-site' }, origin)).to.match(/another site/);
  });
});

describe('Grants → Access', () => {
  // acme and beta below msp; other elsewhere.
  const parents: Record<string, string | undefined> = { msp: undefined, acme: 'msp', 'acme-site': 'acme', beta: 'msp', other: undefined };
  const orgs: OrgTree = {
    exists: (id) => Promise.resolve(id in parents),
    // A subtree is one term on the records' ancestry (docs/adr/0085-organization-ancestry-on-records.md).
    subtreeQuery: (id) => Promise.resolve({ term: { orgPath: id } }),
    isWithin: (id, root) => Promise.resolve(id === root || parents[id] === root || parents[parents[id] ?? ''] === root),
  };
  const person = principalOf({
    subject: 's',
    issuer: 'i',
    name: 'Max',
    grants: [
      { role: 'admin', orgId: 'acme' },
      { role: 'reader', orgId: 'beta' },
    ],
    createdAt: '',
    lastSeenAt: '',
    expiresAt: '',
  });

  it('admits a route when any grant’s role does', () => {
    expect(admits(['admin'], person)).to.equal(true);
    expect(admits(['reader'], person)).to.equal(true);
    expect(admits(['agent'], person)).to.equal(false);
  });

  it('reads across the union of subtrees and writes only where a grant is admin', async () => {
    const read = new Access(person, orgs, ['admin', 'reader']);
    expect(await read.orgFilter()).to.deep.equal({
      bool: { should: [{ term: { orgPath: 'acme' } }, { term: { orgPath: 'beta' } }], minimum_should_match: 1 },
    });
    expect(await read.covers('beta')).to.equal(true);
    expect(await read.covers('other')).to.equal(false);
    await read.assertOrg('beta');
    const write = new Access(person, orgs, ['admin']);
    await write.assertOrg('acme-site');
    let refused: unknown;
    await write.assertOrg('beta').catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(ForbiddenError);
    expect(await write.orgFilter()).to.deep.equal({ term: { orgPath: 'acme' } });
  });

  it('keeps a token’s single grant as before', async () => {
    const token = new Access({ role: 'reader', name: 't', tokenId: 't1', orgId: 'acme' }, orgs, ['admin', 'reader']);
    expect(await token.orgFilter()).to.deep.equal({ term: { orgPath: 'acme' } });
    expect(new Access({ role: 'system', name: 'root', tokenId: 't0' }, orgs, ['admin']).unrestricted).to.equal(true);
  });
});

describe('Login return path', () => {
  it('stays inside the console', () => {
    expect(consoleReturnPath('/console#/endpoints/agents')).to.equal('/console#/endpoints/agents');
    for (const bad of ['https://evil.example/console', '//evil.example', '/consolex', '/console\\..', '/api', undefined, ['/console']]) {
      expect(consoleReturnPath(bad)).to.equal('/console');
    }
  });
});

describe('Login session expiry (injected clock)', () => {
  const t = { idleSeconds: 60, maxSeconds: 600 };
  const start = Date.parse('2026-11-26T10:00:00.000Z');
  const at = (s: number): string => new Date(start + s * 1000).toISOString();

  it('ends after the idle timeout without use, and at the absolute end whatever the use', () => {
    const doc = { lastSeenAt: at(0), expiresAt: at(600) };
    expect(sessionExpiry(doc, start + 59_000, t)).to.deep.equal({ expiresAt: start + 60_000 });
    expect(sessionExpiry(doc, start + 60_000, t).ended).to.equal('idle');
    expect(sessionExpiry({ lastSeenAt: at(590), expiresAt: at(600) }, start + 599_000, t)).to.deep.equal({ expiresAt: start + 600_000 });
    expect(sessionExpiry({ lastSeenAt: at(599), expiresAt: at(600) }, start + 600_000, t).ended).to.equal('absolute');
  });

  it('keeps a used session alive past the idle timeout, and refuses it once idle (SessionService)', async () => {
    let now = start;
    const docs = new Map<string, SessionDoc>();
    const store = {
      create: (h: string, d: SessionDoc) => Promise.resolve(void docs.set(h, d)),
      get: (h: string) => Promise.resolve(docs.get(h)),
      touch: (h: string, lastSeenAt: string) => Promise.resolve(void docs.set(h, { ...(docs.get(h) as SessionDoc), lastSeenAt })),
      delete: (h: string) => Promise.resolve(void docs.delete(h)),
    } as unknown as SessionStore;
    const bumps: string[][] = [];
    const feed = { append: (_f: string, ids: string[]) => Promise.resolve(void bumps.push(ids)) } as unknown as ChangeFeedStore;
    const events: AuditEvent[] = [];
    const audit = { record: (e: AuditEvent) => Promise.resolve(void events.push(e)), offer: (e: AuditEvent) => (events.push(e), 'queued' as const) };
    const svc = new SessionService(store, feed, audit, { ...t, cacheSeconds: 30, now: () => now }, createLogger('silent'));
    const req = { requestId: 'r', method: 'GET', path: '/auth/session' };
    const { secret } = await svc.create({ subject: 's', issuer: 'i', email: 'a@b.c', grants: [{ role: 'admin', orgId: 'acme' }] }, req);
    for (let s = 50; s <= 300; s += 50) {
      now = start + s * 1000;
      const v = await svc.verify(secret, req);
      expect(v.principal.person?.email).to.equal('a@b.c');
      await new Promise((r) => setImmediate(r));
    }
    now += 61_000;
    let err: unknown;
    await svc.verify(secret, req).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(UnauthorizedError);
    expect(docs.size).to.equal(0);
    expect(bumps).to.have.length(1);
    expect(events.map((e) => [e.kind, e.reason])).to.deep.equal([
      ['SIGN_IN', undefined],
      ['SIGN_OUT', 'idle'],
    ]);
  });
});

describe('Login session rechecks at the identity provider (injected clock)', () => {
  const t = { idleSeconds: 3600, maxSeconds: 43_200 };
  const start = Date.parse('2026-11-26T10:00:00.000Z');
  const req = { requestId: 'r', method: 'GET', path: '/auth/session' };
  const acme = [{ role: 'admin' as const, orgId: 'acme' }];

  /** A session service over in-memory fakes; `answer` decides what the provider says. */
  function world(answer: (doc: SessionDoc) => Promise<SessionRecheck>, log = createLogger('silent')) {
    const w = {
      now: start,
      docs: new Map<string, SessionDoc>(),
      bumps: [] as string[][],
      events: [] as AuditEvent[],
      asked: 0,
    };
    const store = {
      create: (h: string, d: SessionDoc) => Promise.resolve(void w.docs.set(h, d)),
      get: (h: string) => Promise.resolve(w.docs.get(h)),
      touch: (h: string, lastSeenAt: string) => Promise.resolve(void w.docs.set(h, { ...(w.docs.get(h) as SessionDoc), lastSeenAt })),
      recheck: (h: string, change: Partial<SessionDoc>) => Promise.resolve(void w.docs.set(h, { ...(w.docs.get(h) as SessionDoc), ...change })),
      delete: (h: string) => Promise.resolve(void w.docs.delete(h)),
    } as unknown as SessionStore;
    const feed = { append: (_f: string, ids: string[]) => Promise.resolve(void w.bumps.push(ids)) } as unknown as ChangeFeedStore;
    const audit = { record: (e: AuditEvent) => Promise.resolve(void w.events.push(e)), offer: (e: AuditEvent) => (w.events.push(e), 'queued' as const) };
    const rechecker: SessionRechecker = {
      recheck: (doc) => {
        w.asked++;
        return answer(doc);
      },
    };
    const svc = new SessionService(store, feed, audit, { ...t, cacheSeconds: 30, recheckSeconds: 300, rechecker, now: () => w.now }, log);
    /** Signs in with the provider's refresh token (null: it gave none). */
    const signIn = async (refreshToken: string | null = 'sealed-1') =>
      (await svc.create({ subject: 's', issuer: 'i', grants: acme, ...(refreshToken !== null ? { refreshToken } : {}) }, req)).secret;
    return { w, svc, signIn };
  }

  it('asks only once the recheck interval has passed, then takes the provider’s grants and tokens on every instance', async () => {
    const { w, svc, signIn } = world(() => Promise.resolve({ kind: 'current', grants: [{ role: 'reader', orgId: 'acme' }], refreshToken: 'sealed-2' }));
    const secret = await signIn();
    w.now = start + 299_000;
    expect((await svc.verify(secret, req)).principal.grants).to.deep.equal(acme);
    expect(w.asked).to.equal(0);
    w.now = start + 300_000;
    const v = await svc.verify(secret, req);
    expect(v.principal.grants).to.deep.equal([{ role: 'reader', orgId: 'acme' }]);
    expect(w.asked).to.equal(1);
    const stored = [...w.docs.values()][0];
    expect(stored.refreshToken).to.equal('sealed-2');
    expect(stored.checkedAt).to.equal(new Date(start + 300_000).toISOString());
    // The grants changed: the other instances are told to read the session again.
    expect(w.bumps).to.deep.equal([[v.hash]]);
    w.now = start + 599_000;
    await svc.verify(secret, req);
    expect(w.asked).to.equal(1);
  });

  it('ends the session everywhere, audited, when the provider refuses, or leaves the person no grant', async () => {
    const answers: SessionRecheck[] = [
      { kind: 'ended', reason: 'invalid_grant: Account disabled' },
      { kind: 'current', grants: [] },
    ];
    for (const answer of answers) {
      const { w, svc, signIn } = world(() => Promise.resolve(answer));
      const secret = await signIn();
      w.now = start + 301_000;
      let err: unknown;
      await svc.verify(secret, req).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(UnauthorizedError);
      expect((err as Error).message).to.contain('identity provider ended this sign-in');
      expect(w.docs.size).to.equal(0);
      expect(w.bumps).to.have.length(1);
      expect(w.events.map((e) => [e.kind, e.reason, e.operation])).to.deep.equal([
        ['SIGN_IN', undefined, 'signIn'],
        ['SIGN_OUT', 'ended-at-idp', 'sessionRecheck'],
      ]);
      // Ended for good: the next use finds nothing.
      await svc.verify(secret, req).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(UnauthorizedError);
    }
  });

  it('keeps the session as it was while the provider cannot answer, and asks again after a back-off', async () => {
    let up = false;
    const { w, svc, signIn } = world(() => (up ? Promise.resolve({ kind: 'current', grants: acme }) : Promise.reject(new Error('connect ECONNREFUSED'))));
    const secret = await signIn();
    w.now = start + 301_000;
    expect((await svc.verify(secret, req)).principal.grants).to.deep.equal(acme);
    expect(w.asked).to.equal(1);
    w.now += 29_000;
    await svc.verify(secret, req);
    expect(w.asked, 'asked again within the back-off').to.equal(1);
    up = true;
    w.now += 2000;
    await svc.verify(secret, req);
    expect(w.asked).to.equal(2);
    expect([...w.docs.values()][0].checkedAt).to.equal(new Date(w.now).toISOString());
    // Same grants: nothing to tell the other instances.
    expect(w.bumps).to.have.length(0);
  });

  it('says at most once a minute that the provider does not answer, however many sessions ask', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const { w, svc, signIn } = world(() => Promise.reject(new Error('connect ECONNREFUSED')), createLogger('info', sink));
    const secrets = [await signIn(), await signIn(), await signIn()];
    w.now = start + 301_000;
    for (const s of secrets) await svc.verify(s, req);
    w.now += 31_000;
    for (const s of secrets) await svc.verify(s, req);
    expect(w.asked).to.equal(6);
    const warned = (): { unanswered: number }[] => lines.map((l) => JSON.parse(l) as { msg: string; unanswered: number }).filter((l) => l.msg.includes('could not recheck'));
    expect(warned().map((l) => l.unanswered)).to.deep.equal([1]);
    w.now += 31_000;
    await svc.verify(secrets[0], req);
    expect(warned().map((l) => l.unanswered)).to.deep.equal([1, 6]);
  });

  it('shares one recheck among the requests of a session that arrive together', async () => {
    let answer: (r: SessionRecheck) => void = () => undefined;
    const { w, svc, signIn } = world(() => new Promise<SessionRecheck>((r) => (answer = r)));
    const secret = await signIn();
    w.now = start + 301_000;
    const all = Promise.all(Array.from({ length: 5 }, () => svc.verify(secret, req)));
    await new Promise((r) => setImmediate(r));
    answer({ kind: 'current', grants: acme });
    expect((await all).map((v) => v.principal.grants)).to.deep.equal(Array.from({ length: 5 }, () => acme));
    expect(w.asked).to.equal(1);
  });

  it('lets a newer recheck of another instance stand when the provider refuses a rotated refresh token', async () => {
    const { w, svc, signIn } = world((doc) => {
      // Meanwhile another instance rechecked with the same token and stored the next one.
      const [hash] = [...w.docs.keys()];
      w.docs.set(hash, { ...doc, refreshToken: 'sealed-2', checkedAt: new Date(w.now).toISOString(), grants: [{ role: 'reader', orgId: 'beta' }] });
      return Promise.resolve({ kind: 'ended', reason: 'invalid_grant: Stale token' });
    });
    const secret = await signIn();
    w.now = start + 301_000;
    expect((await svc.verify(secret, req)).principal.grants).to.deep.equal([{ role: 'reader', orgId: 'beta' }]);
    expect(w.docs.size).to.equal(1);
    expect(w.events.map((e) => e.kind)).to.deep.equal(['SIGN_IN']);
  });

  it('never asks about a session that got no refresh token', async () => {
    const { w, svc, signIn } = world(() => Promise.resolve({ kind: 'ended', reason: 'x' }));
    const secret = await signIn(null);
    w.now = start + 3_000_000;
    expect((await svc.verify(secret, req)).principal.grants).to.deep.equal(acme);
    expect(w.asked).to.equal(0);
  });

  it('seals refresh tokens for one person under the client secret', () => {
    const seal = new RefreshTokenSeal('client-secret');
    const person = { issuer: 'https://idp.example/realms/ecs', subject: 'u-1' };
    const sealed = seal.seal('the-refresh-token', person);
    expect(sealed).to.not.contain('the-refresh-token');
    expect(seal.open(sealed, person)).to.equal('the-refresh-token');
    expect(seal.open(sealed, { ...person, subject: 'u-2' }), 'moved to another person').to.equal(undefined);
    expect(new RefreshTokenSeal('rotated-secret').open(sealed, person), 'another client secret').to.equal(undefined);
    expect(seal.open(`${sealed.slice(0, -4)}AAAA`, person), 'tampered').to.equal(undefined);
    expect(seal.open('garbage', person)).to.equal(undefined);
  });
});
