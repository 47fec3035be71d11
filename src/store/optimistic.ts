/**
 * Server-side read-modify-write with optimistic concurrency, in one place. `attempt` reads,
 * decides and writes conditionally on its read; when the store refuses the write because
 * another writer got in between (WriteConflictError), it runs again on a fresh read. Every
 * refusal means some other writer succeeded, so a bounded number of concurrent writers all
 * finish; a short jittered pause between attempts spreads them out. Other errors, including
 * the 409s an attempt decides itself (a refused state move, a held unique key), end it at once.
 *
 * Contention that outlasts every attempt is the store's condition, not the caller's mistake:
 * it answers 503 with Retry-After (declared on every operation), never an undeclared 409.
 */
import { ServiceUnavailableError, WriteConflictError } from '../errors.js';

/** Attempts before giving up: 8 writers racing for one new document need at most 8; twice that leaves headroom for bursts. */
export const OPTIMISTIC_ATTEMPTS = 16;

/** The pause before attempt `n + 1`: random in [0, min(2^n, 100)) ms. */
export function conflictBackoffMs(n: number, random: () => number = Math.random): number {
  return random() * Math.min(2 ** n, 100);
}

/** Waits the pause before attempt `n + 1` (for loops that batch their own retries, like a bulk ingest). */
export function pauseAfterConflict(n: number): Promise<void> {
  return new Promise((r) => setTimeout(r, conflictBackoffMs(n)));
}

export async function readModifyWrite<T>(attempt: () => Promise<T>, maxAttempts = OPTIMISTIC_ATTEMPTS): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof WriteConflictError)) throw err;
      if (n >= maxAttempts) {
        throw new ServiceUnavailableError(`the record kept changing under ${n} attempts to update it; retry`, 1);
      }
      await pauseAfterConflict(n);
    }
  }
}
