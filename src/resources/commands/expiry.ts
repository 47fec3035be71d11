/**
 * Command expiry and bounded retries. A message carries `expiresAt` (its create's
 * `ttlSeconds`, else ECS_COMMAND_TTL); once past it, a message still waiting (CREATED or
 * RETRY) reads as EXPIRED (an extension status) in every get and list, is left out of what a
 * gateway polls for, and can no longer move. Decided when read and inside queries (a range on
 * expiresAt), so nothing sweeps. A message stored before expiry existed (no expiresAt)
 * expires ECS_COMMAND_TTL after its createdAt. See docs/adr/0041-command-expiry-and-bounded-retries.md.
 */
import type { Query } from '../../store/doc-store.js';
import type { CommandMessageDoc, CommandMessageStatus, EffectiveCommandMessageStatus } from './model.js';

/** Statuses a message waits in (the only ones that expire). */
export const WAITING_STATUSES: readonly CommandMessageStatus[] = ['CREATED', 'RETRY'];

export interface CommandExpiryOptions {
  /** ECS_COMMAND_TTL (seconds). */
  ttlSeconds: number;
  /** ECS_COMMAND_MAX_RETRIES. */
  maxRetries: number;
  now?: () => number;
}

export class CommandExpiry {
  readonly now: () => number;
  constructor(readonly opts: CommandExpiryOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The expiry of a message created now, with its own lifetime when given. */
  expiresAt(createdAtMs: number, ttlSeconds?: number): string {
    return new Date(createdAtMs + (ttlSeconds ?? this.opts.ttlSeconds) * 1000).toISOString();
  }

  /** True for a waiting message past its expiry. */
  isExpired(doc: Pick<CommandMessageDoc, 'status' | 'expiresAt' | 'createdAt'>): boolean {
    if (!WAITING_STATUSES.includes(doc.status)) return false;
    const at = doc.expiresAt ? Date.parse(doc.expiresAt) : Date.parse(doc.createdAt) + this.opts.ttlSeconds * 1000;
    return at <= this.now();
  }

  /** The status a stored message reads as now. */
  effectiveStatus(doc: Pick<CommandMessageDoc, 'status' | 'expiresAt' | 'createdAt'>): EffectiveCommandMessageStatus {
    return this.isExpired(doc) ? 'EXPIRED' : doc.status;
  }

  /** True when the next move into RETRY exceeds the bound (the message fails instead). */
  retriesExhausted(doc: Pick<CommandMessageDoc, 'retries'>): boolean {
    return (doc.retries ?? 0) + 1 > this.opts.maxRetries;
  }

  /** Waiting messages past their expiry (a range on expiresAt; createdAt for those without one). */
  expiredQuery(): Query {
    const nowMs = this.now();
    const now = new Date(nowMs).toISOString();
    return {
      bool: {
        filter: [{ terms: { status: [...WAITING_STATUSES] } }],
        should: [
          { range: { expiresAt: { lte: now } } },
          {
            bool: {
              must_not: [{ exists: { field: 'expiresAt' } }],
              filter: [{ range: { createdAt: { lte: new Date(nowMs - this.opts.ttlSeconds * 1000).toISOString() } } }],
            },
          },
        ],
        minimum_should_match: 1,
      },
    };
  }

  /** The filter for messages that read as `status` now. */
  statusFilter(status: EffectiveCommandMessageStatus): Query {
    if (status === 'EXPIRED') return this.expiredQuery();
    if (WAITING_STATUSES.includes(status)) return { bool: { filter: [{ term: { status } }], must_not: [this.expiredQuery()] } };
    return { term: { status } };
  }
}
