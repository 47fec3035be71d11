/** Builds the Idempotency-Key records' store (the HTTP flow that uses it: src/http/idempotency.ts). */
import type { BaseDeps } from '../deps.js';
import { IdempotencyKeyDocStore } from './store.js';

export function createIdempotencyKeys({ store, log }: BaseDeps): IdempotencyKeyDocStore {
  return new IdempotencyKeyDocStore(store, log);
}
