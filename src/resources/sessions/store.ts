/** The sessions index: one document per login session, keyed by the SHA-256 of its secret. The only code that touches it. */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { SessionDoc } from './model.js';

export class SessionStore {
  private readonly docs: DocStore<SessionDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<SessionDoc>(ctx, 'sessions', 'session');
  }

  /** Creates a session; searchable on return (a back-channel logout finds it by sid right after sign-in). */
  async create(hash: string, doc: SessionDoc): Promise<void> {
    await this.docs.create(hash, doc);
  }

  /** One realtime get by hash. */
  async get(hash: string): Promise<SessionDoc | undefined> {
    return (await this.docs.get(hash))?.doc;
  }

  /** Notes a use; not refreshed (read back by realtime get only). */
  async touch(hash: string, lastSeenAt: string): Promise<void> {
    await this.docs.patch(hash, { lastSeenAt }, { refresh: false });
  }

  /** Writes what a recheck at the identity provider returned (grants, tokens, when). */
  async recheck(hash: string, change: Pick<SessionDoc, 'grants' | 'checkedAt' | 'refreshToken' | 'idToken'>): Promise<void> {
    await this.docs.patch(hash, change, { refresh: false });
  }

  async delete(hash: string): Promise<void> {
    await this.docs.delete(hash, { refresh: false });
  }

  /**
   * Hashes of the sessions of a person at an issuer; with `sid`, those of that identity-provider
   * session (and the person's sessions that recorded no sid: the provider's ID token had none).
   */
  async find(issuer: string, subject: string | undefined, sid: string | undefined): Promise<string[]> {
    const sidFilter =
      sid === undefined
        ? []
        : subject === undefined
          ? [{ term: { sid } }]
          : [{ bool: { should: [{ term: { sid } }, { bool: { must_not: [{ exists: { field: 'sid' } }] } }], minimum_should_match: 1 } }];
    const filter = [{ term: { issuer } }, ...(subject !== undefined ? [{ term: { subject } }] : []), ...sidFilter];
    const hits = await this.docs.all({ bool: { filter } }, { limit: 10_000 });
    return hits.map((h) => h.id);
  }

  /** The sessions of a person (by subject or e-mail), or every session, with their hashes. */
  async list(who: { subject?: string; email?: string }): Promise<{ hash: string; doc: SessionDoc }[]> {
    const filter = [...(who.subject !== undefined ? [{ term: { subject: who.subject } }] : []), ...(who.email !== undefined ? [{ term: { email: who.email } }] : [])];
    const hits = await this.docs.all({ bool: { filter } }, { sort: [{ createdAt: 'asc' }] });
    return hits.map((h) => ({ hash: h.id, doc: h.doc }));
  }

  /** Hashes of sessions past their absolute end, or unused since `idleBefore`. */
  async expired(now: string, idleBefore: string): Promise<string[]> {
    const hits = await this.docs.all(
      { bool: { should: [{ range: { expiresAt: { lte: now } } }, { range: { lastSeenAt: { lte: idleBefore } } }], minimum_should_match: 1 } },
      { limit: 10_000 },
    );
    return hits.map((h) => h.id);
  }
}
