/**
 * Login sessions asked about again at the identity provider while they live
 * (docs/adr/0076-sessions-rechecked-at-the-identity-provider.md): when, one recheck per session
 * at a time, a back-off for a provider that cannot answer, and what its answer changes.
 */
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { RequestRef, SessionDoc, SessionRechecker } from './model.js';
import type { SessionStore } from './store.js';

/** A session this instance verified, and until when its cached copy holds. */
export interface CacheEntry {
  doc: SessionDoc;
  until: number;
}

export const MAX_CACHED = 20_000;
/** After the identity provider could not answer a recheck, the session is not asked about again for this long (per instance). */
const RECHECK_BACKOFF_MS = 30_000;
/** An instance says at most this often that the identity provider could not answer (with how many rechecks since). */
const RECHECK_WARN_EVERY_MS = 60_000;

/** What a recheck needs of the session service: its clock, its cache, and ending a session. */
export interface RecheckHost {
  now(): number;
  remember(hash: string, doc: SessionDoc, now: number): CacheEntry;
  forget(hash: string): void;
  /** Ends the session on every instance, audited as ended at the identity provider. */
  end(hash: string, doc: SessionDoc, req: RequestRef): Promise<void>;
}

export class SessionRechecks {
  /** Rechecks under way on this instance: requests of one session share one. */
  private readonly rechecking = new Map<string, Promise<CacheEntry>>();
  /** Sessions whose recheck the provider could not answer: not asked again before this time. */
  private readonly backoff = new Map<string, number>();
  /** Rechecks the provider could not answer since the last warning, and when that was. */
  private unanswered = { count: 0, warnedAt: -Infinity };

  constructor(
    private readonly store: SessionStore,
    private readonly feed: ChangeFeedStore,
    private readonly opts: { recheckSeconds?: number; rechecker?: SessionRechecker },
    private readonly log: Logger,
    private readonly host: RecheckHost,
  ) {}

  /** Whether a session is due to be asked about again (its provider's word is older than ECS_SESSION_RECHECK_SECONDS). */
  due(hash: string, doc: SessionDoc, now: number): boolean {
    const every = (this.opts.recheckSeconds ?? 0) * 1000;
    if (!this.opts.rechecker || every <= 0 || doc.refreshToken === undefined) return false;
    if (now - Date.parse(doc.checkedAt ?? doc.createdAt) < every) return false;
    const backoff = this.backoff.get(hash);
    if (backoff === undefined) return true;
    if (backoff > now) return false;
    this.backoff.delete(hash);
    return true;
  }

  /**
   * Asks the identity provider whether the person is still signed in there and what they may
   * do now (docs/adr/0076-sessions-rechecked-at-the-identity-provider.md). A refusal ends the
   * session on every instance (audited, SIGN_OUT `ended-at-idp`); new grants replace the old
   * ones on every instance; a provider that cannot answer leaves the session as it was.
   */
  run(hash: string, entry: CacheEntry, req: RequestRef): Promise<CacheEntry> {
    let running = this.rechecking.get(hash);
    if (!running) {
      running = this.askProvider(hash, entry, req).finally(() => this.rechecking.delete(hash));
      this.rechecking.set(hash, running);
    }
    return running;
  }

  private async askProvider(hash: string, entry: CacheEntry, req: RequestRef): Promise<CacheEntry> {
    const rechecker = this.opts.rechecker as SessionRechecker;
    const asked = entry.doc;
    let answer: Awaited<ReturnType<SessionRechecker['recheck']>>;
    try {
      answer = await rechecker.recheck(asked);
    } catch (err) {
      this.backoff.set(hash, this.host.now() + RECHECK_BACKOFF_MS);
      if (this.backoff.size > MAX_CACHED) this.backoff.delete(this.backoff.keys().next().value as string);
      this.unanswered.count++;
      const now = this.host.now();
      if (now - this.unanswered.warnedAt >= RECHECK_WARN_EVERY_MS) {
        this.log.warn(
          { err: { message: (err as Error).message }, unanswered: this.unanswered.count },
          'the identity provider could not recheck login sessions; they stay as they were',
        );
        this.unanswered = { count: 0, warnedAt: now };
      }
      return entry;
    }
    const now = this.host.now();
    if (answer.kind === 'ended' || answer.grants.length === 0) {
      // Another instance may have rechecked first with the same refresh token, which a provider
      // that rotates them then refuses: its newer word stands.
      const stored = await this.store.get(hash);
      if (stored && Date.parse(stored.checkedAt ?? stored.createdAt) > Date.parse(asked.checkedAt ?? asked.createdAt)) {
        return this.host.remember(hash, stored, now);
      }
      const reason = answer.kind === 'ended' ? answer.reason : 'no grant left in the roles claim';
      this.log.info({ iss: asked.issuer, sub: asked.subject, reason }, 'login session ended at the identity provider');
      await this.host.end(hash, stored ?? asked, req);
      throw new UnauthorizedError(`the identity provider ended this sign-in (${reason}): sign in again`);
    }
    const change = {
      grants: answer.grants,
      checkedAt: new Date(now).toISOString(),
      ...(answer.refreshToken ? { refreshToken: answer.refreshToken } : {}),
      ...(answer.idToken ? { idToken: answer.idToken } : {}),
    };
    try {
      await this.store.recheck(hash, change);
    } catch (err) {
      // Signed out meanwhile, on this instance or another.
      if (err instanceof NotFoundError) {
        this.host.forget(hash);
        throw new UnauthorizedError('no login session (signed out, or ended at the identity provider): sign in');
      }
      throw err;
    }
    const doc = { ...asked, ...change };
    // Other instances hold the old grants in their caches: they read the session again.
    if (JSON.stringify(asked.grants) !== JSON.stringify(answer.grants)) await this.feed.append('sessions', [hash]);
    return this.host.remember(hash, doc, now);
  }
}
