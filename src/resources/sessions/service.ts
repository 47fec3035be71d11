/**
 * Login sessions (docs/adr/0071-login-sessions-in-the-store.md): created at sign-in, found by
 * the cookie's secret on every request, ended by sign-out, back-channel logout or expiry.
 *
 * Each instance caches the sessions it verified; an end made through any instance reaches the
 * others through the `sessions` change feed (one poll, ECS_CHANGE_POLL_MS), and at worst
 * within the token cache's time limit while the feed is unreadable. Expiry needs no message:
 * every instance computes it from the stored times, re-reading a session its cache calls idle
 * (another instance may have seen it used since).
 */
import crypto from 'node:crypto';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import { hashToken } from '../../access/tokens.js';
import { csrfTokenFor } from '../../access/tokens.js';
import type { Logger } from '../../log.js';
import { Periodic } from '../../periodic.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import {
  sessionExpiry,
  touchIntervalMs,
  type LoginSessions,
  type RequestRef,
  type SessionAudit,
  type SessionDoc,
  type SessionEnd,
  type SessionRechecker,
  type SessionTimeouts,
  type VerifiedSession,
} from './model.js';
import { principalOf, sessionEvent } from './events.js';
import type { SessionStore } from './store.js';
import { MAX_CACHED, SessionRechecks, type CacheEntry } from './recheck.js';

/** Ended sessions nobody uses again are deleted this often. */
const SWEEP_EVERY_MS = 10 * 60_000;

export interface SessionServiceOptions extends SessionTimeouts {
  cacheSeconds: number;
  /** ECS_SESSION_RECHECK_SECONDS: how long the identity provider's word holds (0: sign-in's holds until the session ends). */
  recheckSeconds?: number;
  /** Asks the identity provider again (none without single sign-on). */
  rechecker?: SessionRechecker;
  now?: () => number;
}

export class SessionService implements LoginSessions {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly sweeper: Periodic;
  private readonly rechecks: SessionRechecks;

  constructor(
    private readonly store: SessionStore,
    private readonly feed: ChangeFeedStore,
    private readonly audit: SessionAudit,
    private readonly opts: SessionServiceOptions,
    private readonly log: Logger,
  ) {
    this.sweeper = new Periodic('sweep of ended login sessions', SWEEP_EVERY_MS, () => this.sweep(), log);
    this.rechecks = new SessionRechecks(store, feed, opts, log, {
      now: () => this.now(),
      remember: (hash, doc, now) => this.remember(hash, doc, now),
      forget: (hash) => void this.cache.delete(hash),
      end: async (hash, doc, req) => {
        await this.endOne(hash, doc, 'ended-at-idp', 'sessionRecheck', 401, req);
      },
    });
  }

  /** The absolute lifetime (ECS_SESSION_MAX_SECONDS): the cookie's Max-Age. */
  get maxSeconds(): number {
    return this.opts.maxSeconds;
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** Starts a session for a person with at least one grant; returns the cookie's secret. Audited (SIGN_IN) before it is answered. */
  async create(person: Omit<SessionDoc, 'createdAt' | 'lastSeenAt' | 'expiresAt' | 'checkedAt'>, req: RequestRef): Promise<{ secret: string; hash: string; doc: SessionDoc }> {
    const now = this.now();
    const secret = crypto.randomBytes(32).toString('base64url');
    const hash = hashToken(secret);
    const doc: SessionDoc = {
      ...person,
      checkedAt: new Date(now).toISOString(),
      createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.opts.maxSeconds * 1000).toISOString(),
    };
    await this.store.create(hash, doc);
    await this.audit.record(sessionEvent('SIGN_IN', 'signIn', 302, req, doc, { sessionHash: hash }));
    return { secret, hash, doc };
  }

  /** The session a cookie's secret names: 401 when there is none or it has ended (an ended one is removed). */
  async verify(secret: string, req: RequestRef): Promise<VerifiedSession> {
    if (secret.length > 256) throw new UnauthorizedError('no login session: sign in');
    const hash = hashToken(secret);
    const now = this.now();
    let entry = this.cache.get(hash);
    let fresh = false;
    if (!entry || entry.until < now) {
      entry = await this.load(hash, now);
      fresh = true;
    }
    let exp = sessionExpiry(entry.doc, now, this.opts);
    if (exp.ended === 'idle' && !fresh) {
      entry = await this.load(hash, now);
      exp = sessionExpiry(entry.doc, now, this.opts);
    }
    if (exp.ended) {
      await this.endOne(hash, entry.doc, exp.ended, 'sessionExpired', 401, req);
      throw new UnauthorizedError('the login session has expired: sign in again');
    }
    if (this.rechecks.due(hash, entry.doc, now)) entry = await this.rechecks.run(hash, entry, req);
    if (now - Date.parse(entry.doc.lastSeenAt) >= touchIntervalMs(this.opts)) {
      const lastSeenAt = new Date(now).toISOString();
      entry.doc = { ...entry.doc, lastSeenAt };
      exp = sessionExpiry(entry.doc, now, this.opts);
      // Off the request path: a lost touch only makes the idle timeout count from an earlier use.
      this.store.touch(hash, lastSeenAt).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) this.log.warn({ err: { message: (err as Error).message } }, 'could not note the use of a login session');
      });
    }
    return { principal: principalOf(entry.doc), csrfToken: csrfTokenFor(secret), expiresAt: new Date(exp.expiresAt).toISOString(), doc: entry.doc, hash };
  }

  private async load(hash: string, now: number): Promise<CacheEntry> {
    const doc = await this.store.get(hash);
    if (!doc) {
      this.cache.delete(hash);
      throw new UnauthorizedError('no login session (signed out, or ended at the identity provider): sign in');
    }
    return this.remember(hash, doc, now);
  }

  private remember(hash: string, doc: SessionDoc, now: number): CacheEntry {
    const entry = { doc, until: now + this.opts.cacheSeconds * 1000 };
    if (this.opts.cacheSeconds > 0) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(hash, entry);
    }
    return entry;
  }

  /** Sign-out: ends the session on every instance (audited, SIGN_OUT). */
  async signOut(session: VerifiedSession, req: RequestRef): Promise<void> {
    await this.endOne(session.hash, session.doc, 'signed-out', 'signOut', 200, req);
  }

  /**
   * Back-channel logout: ends the sessions of one identity-provider session (`sid`), or every
   * session of the person (`sub`) at that issuer. Returns how many ended.
   */
  async endAtIdp(issuer: string, subject: string | undefined, sid: string | undefined, req: RequestRef): Promise<number> {
    let hashes = await this.store.find(issuer, subject, sid);
    // A provider whose ID tokens named its session otherwise than its logout tokens: the person's sessions end (the safe side).
    if (hashes.length === 0 && sid !== undefined && subject !== undefined) hashes = await this.store.find(issuer, subject, undefined);
    for (const hash of hashes) {
      const doc = await this.store.get(hash);
      if (doc) await this.endOne(hash, doc, 'backchannel-logout', 'backchannelLogout', 200, req);
    }
    return hashes.length;
  }

  /** The live sessions of a person (by subject or e-mail), or all of them (the operator's `ops sessions`). */
  async list(who: { subject?: string; email?: string }): Promise<{ hash: string; doc: SessionDoc; expiresAt: string }[]> {
    const now = this.now();
    const out: { hash: string; doc: SessionDoc; expiresAt: string }[] = [];
    for (const s of await this.store.list(who)) {
      const exp = sessionExpiry(s.doc, now, this.opts);
      if (!exp.ended) out.push({ ...s, expiresAt: new Date(exp.expiresAt).toISOString() });
    }
    return out;
  }

  /**
   * Ends sessions on every instance at the operator's word (audited, SIGN_OUT `ended-by-operator`):
   * the break-glass when the identity provider cannot end them (it is down, or compromised).
   */
  async endByOperator(sessions: { hash: string; doc: SessionDoc }[], req: RequestRef): Promise<number> {
    let ended = 0;
    // A session ended meanwhile (signed out, expired) is not ended again, nor audited twice.
    for (const { hash, doc } of sessions) if (await this.endOne(hash, doc, 'ended-by-operator', 'endSessions', 200, req)) ended++;
    return ended;
  }

  /** Ends one session everywhere; true when this call removed it (false: it was gone already, nothing audited). */
  private async endOne(
    hash: string,
    doc: SessionDoc,
    reason: SessionEnd | 'signed-out' | 'backchannel-logout' | 'ended-at-idp' | 'ended-by-operator',
    operation: string,
    status: number,
    req: RequestRef,
  ): Promise<boolean> {
    this.cache.delete(hash);
    let removed = true;
    try {
      await this.store.delete(hash);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      removed = false;
    }
    await this.feed.append('sessions', [hash]);
    if (!removed) return false;
    const event = sessionEvent('SIGN_OUT', operation, status, req, doc, { sessionHash: hash, reason });
    // Ends someone decided are recorded before they are answered; expiry is offered.
    if (reason !== 'idle' && reason !== 'absolute') await this.audit.record(event);
    else this.audit.offer(event);
    return true;
  }

  /** The `sessions` change feed moved: forget the sessions ended elsewhere (all of them when not known). */
  forget(hashes: string[] | undefined): void {
    if (hashes === undefined) this.cache.clear();
    else for (const h of hashes) this.cache.delete(h);
  }

  /** Sweeps ended sessions every ten minutes (started and stopped by the server). */
  startSweeping(): void {
    this.sweeper.start(SWEEP_EVERY_MS);
  }

  stopSweeping(): void {
    this.sweeper.stop();
  }

  /** Removes sessions that have ended without anyone using them since (their documents only: nobody holds them). */
  async sweep(): Promise<number> {
    const now = this.now();
    const hashes = await this.store.expired(new Date(now).toISOString(), new Date(now - this.opts.idleSeconds * 1000).toISOString());
    for (const hash of hashes) {
      try {
        await this.store.delete(hash);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    return hashes.length;
  }
}
