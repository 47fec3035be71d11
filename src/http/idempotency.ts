/**
 * Idempotency-Key (an extension): a create whose record id the server generates
 * (`idempotent: true` in its route declaration) may carry the header; a repeat with the same
 * key and request from the same caller answers the first outcome and writes nothing more.
 *
 * One flow for every such operation, applied by the router:
 * 1. a create-only claim of the key record (IN_FLIGHT, with a random nonce);
 * 2. a claim that exists: another request → 409; DONE → its stored outcome is replayed;
 *    IN_FLIGHT (an earlier attempt failed with a 5xx, or is still running) → run again;
 * 3. the operation runs with a created id derived from the key record and its nonce, so a
 *    run again after an attempt whose write landed but whose answer was lost meets "already
 *    exists" and answers that record instead of making a second one;
 * 4. a 2xx/4xx outcome is stored in the key record; a 5xx leaves it IN_FLIGHT (retryable).
 * A key record past its expiry counts as absent and is overwritten (with a new nonce, so the
 * key then makes a new record). The store behind it is injected (src/resources/idempotency).
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import { AppError, BadRequestError, ConflictError } from '../errors.js';
import { uuidFrom } from '../domain.js';
import { callerKey, type Principal } from '../access/principal.js';
import type { Reply } from './routes.js';
import type { IdempotencyKeyRecord, IdempotencyKeyStore, IdempotentOutcome, StoredKeyRecord } from '../resources/idempotency/model.js';

export type { IdempotencyKeyRecord, IdempotencyKeyStore, IdempotentOutcome, StoredKeyRecord };
import type { Logger } from '../log.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set on a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1–255 printable ASCII characters (space included, not at either end: Node trims those). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The key of a request to an idempotent operation; undefined when absent, 400 when malformed. */
export function idempotencyKeyOf(ctx: Koa.Context): string | undefined {
  const raw = ctx.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!KEY_PATTERN.test(key)) {
    throw new BadRequestError('Idempotency-Key: must be 1 to 255 printable ASCII characters');
  }
  return key;
}

/** JSON with object keys sorted, so one request always hashes alike. */
function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_k, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}

const sha256 = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');

export { uuidFrom };

export interface IdempotentRequest {
  principal: Principal;
  method: string;
  /** The request path (parameters included). */
  path: string;
  key: string;
  /** The validated request: what makes two requests "the same". */
  request: unknown;
}

export class Idempotency {
  private readonly ttlMs: number;
  constructor(
    private readonly keys: IdempotencyKeyStore,
    ttlSeconds: number,
    private readonly log: Logger,
  ) {
    this.ttlMs = ttlSeconds * 1000;
  }

  /**
   * Runs `operation` at most once per (caller, method, path, key) within the key's lifetime:
   * `createdId` is the id the created record must take.
   */
  async run(req: IdempotentRequest, operation: (createdId: string) => Promise<Reply>): Promise<Reply> {
    // The bootstrap token has a stable tokenId too; every caller without a token shares "anonymous".
    const caller = callerKey(req.principal) ?? req.principal.role;
    const id = sha256(`${caller}\n${req.method}\n${req.path}\n${req.key}`);
    const requestHash = sha256(canonicalJson(req.request));
    const now = new Date();
    this.keys.purgeExpiredSoon(now, Math.min(this.ttlMs, 3_600_000));
    const fresh: IdempotencyKeyRecord = {
      state: 'IN_FLIGHT',
      requestHash,
      nonce: crypto.randomUUID(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.ttlMs).toISOString(),
    };
    const claimed = await this.claim(id, fresh, now);
    if (claimed.requestHash !== requestHash) {
      throw new ConflictError(
        `Idempotency-Key ${JSON.stringify(req.key)} was used for another request to ${req.method} ${req.path}; use a new key`,
        'IdempotencyKeyReusedError',
      );
    }
    if (claimed.state === 'DONE' && claimed.outcome) return replay(claimed.outcome);

    let reply: Reply;
    try {
      reply = await operation(uuidFrom(sha256(`${id}\n${claimed.nonce}`)));
    } catch (err) {
      // A 5xx (store outage, time-out) is not an outcome: the key stays IN_FLIGHT and a retry runs again.
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await this.remember({ kind: 'error', status: err.status, message: err.message, exception: err.exception, headers: err.headers }, id);
      throw err;
    }
    await this.remember({ kind: 'reply', ...reply }, id);
    return reply;
  }

  /** The operation is done: an outcome that cannot be stored only costs a retry a run again. */
  private async remember(outcome: IdempotentOutcome, id: string): Promise<void> {
    await this.keys.complete(id, outcome).catch((err: unknown) => {
      this.log.warn({ err: { message: (err as Error).message } }, 'idempotency key outcome not stored; a retry runs the operation again');
    });
  }

  /** The record the request goes by: its own new claim, or the live one already there. */
  private async claim(id: string, fresh: IdempotencyKeyRecord, now: Date): Promise<IdempotencyKeyRecord> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const held = await this.keys.claim(id, fresh);
      if (!held) return fresh;
      if (Date.parse(held.record.expiresAt) > now.getTime()) return held.record;
      if (await this.keys.reclaim(id, fresh, held)) return fresh;
    }
    throw new ConflictError('Idempotency-Key is being claimed concurrently; retry', 'IdempotencyKeyReusedError');
  }
}

function replay(outcome: IdempotentOutcome): Reply {
  const headers = { ...(outcome.headers ?? {}), [REPLAYED_HEADER]: 'true' };
  if (outcome.kind === 'error') throw new AppError(outcome.status, outcome.message, outcome.exception, headers);
  return { status: outcome.status, body: outcome.body, contentType: outcome.contentType, headers };
}
