/** Request time-out and the optional per-token rate limit (429 with Retry-After). */
import type Koa from 'koa';
import { ServiceUnavailableError, TooManyRequestsError } from '../errors.js';
import type { Principal } from '../access/principal.js';

export { MAX_AGGREGATION_BUCKETS } from '../domain.js';

/** Answers 503 when a request takes longer than `ms` (the work itself is not cancelled). */
export function requestTimeout(ms: number): Koa.Middleware {
  // A promise chain rather than an async function: a held answer keeps no suspended frame here.
  return (ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceUnavailableError(`request did not complete within ${ms} ms`, 1)), ms);
    });
    // A held answer (Reply.hold) ends its own wait: the time-out no longer applies to it, and its timer is let go.
    ctx.state.untimed = () => {
      clearTimeout(timer);
      timer = undefined;
    };
    return Promise.race([next(), timeout]).finally(() => clearTimeout(timer));
  };
}

/** A fixed-window counter per token; `perMinute` 0 disables it. */
export function rateLimiter(perMinute: number): ((p: Principal) => void) | undefined {
  if (perMinute <= 0) return undefined;
  const windows = new Map<string, { start: number; count: number }>();
  return (p: Principal) => {
    if (!p.tokenId) return;
    const key = p.tokenId;
    const now = Date.now();
    let w = windows.get(key);
    if (!w || now - w.start >= 60_000) {
      if (windows.size > 100_000) windows.clear();
      w = { start: now, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    if (w.count > perMinute) throw new TooManyRequestsError(Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)));
  };
}
