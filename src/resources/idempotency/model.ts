/** Idempotency-Key records: what the key store keeps and what the HTTP flow (src/http/idempotency.ts) needs of it. */

/** A stored outcome: the reply, or the 4xx the operation answered. */
export type IdempotentOutcome =
  | { kind: 'reply'; status: number; body?: unknown; contentType?: string; headers?: Record<string, string> }
  | { kind: 'error'; status: number; message: string; exception: string; headers?: Record<string, string> };

export interface IdempotencyKeyRecord {
  state: 'IN_FLIGHT' | 'DONE';
  /** SHA-256 of the canonical request (query and validated body). */
  requestHash: string;
  /** Drawn at each (re)claim: the created id derives from it. */
  nonce: string;
  createdAt: string;
  expiresAt: string;
  outcome?: IdempotentOutcome;
}

export interface StoredKeyRecord {
  record: IdempotencyKeyRecord;
  seqNo: number;
  primaryTerm: number;
}

/** What the flow needs from the key store (implemented by ./store.ts). */
export interface IdempotencyKeyStore {
  /** Create-only write; the record holding the id when it is taken (undefined when claimed). */
  claim(id: string, record: IdempotencyKeyRecord): Promise<StoredKeyRecord | undefined>;
  /** Overwrites an expired record, conditional on the read; false when another request got there first. */
  reclaim(id: string, record: IdempotencyKeyRecord, read: StoredKeyRecord): Promise<boolean>;
  /** Records the outcome (state DONE). */
  complete(id: string, outcome: IdempotentOutcome): Promise<void>;
  /** Deletes the records expired before `now`, at most once per `minIntervalMs` per instance, in the background. */
  purgeExpiredSoon(now: Date, minIntervalMs: number): void;
}
