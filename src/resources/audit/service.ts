/**
 * The audit trail: appends events and searches them.
 *
 * Two ways in. `record` is for an acknowledged write: it resolves once the event is durable in
 * the store (the group-committed bulk acknowledged it), and the router answers the write only
 * then, so no acknowledged write lacks its event even if the process dies the next instant
 * (docs/adr/0054-audit-crash-guarantee.md). `offer` is for everything else (refusals, failed
 * writes): queued behind the same group commit, never awaited by the request, bounded in rate
 * and backlog so a flood of bad tokens cannot turn into a flood of store writes.
 */
import { ServiceUnavailableError } from '../../errors.js';
import { toPage, type Page } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import type { PageRequest } from '../../domain.js';
import type { Access } from '../../access/access.js';
import type { Logger } from '../../log.js';
import type { Query } from '../../store/doc-store.js';
import type { AuditStore } from './store.js';
import type { AuditEvent, AuditSearchCriteria } from './model.js';

export const AUDIT_SORT_FIELDS: Readonly<Record<string, string>> = {
  timestamp: 'timestamp',
  operation: 'operation',
  status: 'status',
  actorTokenId: 'actor.tokenId',
  targetType: 'target.type',
};

/** Attempts of a write's event before the write is answered 503 (its event id makes re-sending safe). */
const RECORD_ATTEMPTS = 3;
/** Offered events (refusals) per second and instance, with a burst of twice that; beyond: counted, dropped. */
const OFFERS_PER_SECOND = 200;
/** Offered events waiting for the store, beyond which new ones are dropped. */
const MAX_OFFER_BACKLOG = 5000;

export type OfferOutcome = 'queued' | 'dropped';

export class AuditService {
  private backlog = 0;
  private readonly pending = new Set<Promise<void>>();
  private tokens = 2 * OFFERS_PER_SECOND;
  private refilledAt = Date.now();

  constructor(
    private readonly store: AuditStore,
    private readonly log: Logger,
  ) {}

  /**
   * Appends the event of an acknowledged write and resolves once the store acknowledged it;
   * 503 when it could not be stored after a few attempts (the write is then not acknowledged).
   */
  async record(event: AuditEvent): Promise<void> {
    let last: unknown;
    for (let attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
      try {
        await this.track(this.store.append(event));
        return;
      } catch (err) {
        last = err;
        if (attempt < RECORD_ATTEMPTS) await new Promise((r) => setTimeout(r, 100 * 4 ** (attempt - 1)));
      }
    }
    this.log.error({ err: { message: (last as Error).message }, event }, 'audit event of a write could not be stored');
    throw new ServiceUnavailableError(
      'the write was applied but its audit event could not be stored; retry the request',
      1,
    );
  }

  /** Queues an event without waiting for it; 'dropped' beyond the rate or backlog bound. */
  offer(event: AuditEvent): OfferOutcome {
    const now = Date.now();
    this.tokens = Math.min(2 * OFFERS_PER_SECOND, this.tokens + ((now - this.refilledAt) / 1000) * OFFERS_PER_SECOND);
    this.refilledAt = now;
    if (this.tokens < 1 || this.backlog >= MAX_OFFER_BACKLOG) return 'dropped';
    this.tokens -= 1;
    this.backlog += 1;
    void this.track(this.store.append(event))
      .catch((err: unknown) =>
        this.log.warn({ err: { message: (err as Error).message }, event }, 'audit event could not be stored'),
      )
      .finally(() => (this.backlog -= 1));
    return 'queued';
  }

  /** Waits for every event handed in so far (shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private track(p: Promise<void>): Promise<void> {
    this.pending.add(p);
    const done = (): void => void this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  /**
   * POST /audit/search-page: system tokens see every event; an admin the events whose target
   * organization is in its subtree (an event whose target organization is unknown: system only).
   */
  async search(criteria: AuditSearchCriteria, pr: PageRequest, access: Access): Promise<Page<AuditEvent>> {
    const filter: Query[] = [];
    const scope = await access.resolveScope(criteria.orgId, criteria.includeChildren ?? false, 'target.orgId');
    if (scope) filter.push(scope);
    if (criteria.from !== undefined || criteria.to !== undefined)
      filter.push({ range: { timestamp: { gte: criteria.from, lt: criteria.to } } });
    const terms: [keyof AuditSearchCriteria, string][] = [
      ['actorTokenId', 'actor.tokenId'],
      ['actorSubject', 'actor.subject'],
      ['actorEmail', 'actor.email'],
      ['operation', 'operation'],
      ['targetType', 'target.type'],
      ['targetId', 'target.id'],
      ['kind', 'kind'],
      ['status', 'status'],
      ['requestId', 'requestId'],
    ];
    for (const [field, indexed] of terms) {
      const v = criteria[field];
      if (v !== undefined) filter.push({ term: { [indexed]: v } });
    }
    const res = await this.store.search(
      { bool: { filter } },
      pageQuery(pr, AUDIT_SORT_FIELDS, [{ field: 'timestamp', direction: 'DESC' }]),
    );
    return toPage(
      pr,
      res.total,
      res.items.map((h) => h.doc),
    );
  }
}
