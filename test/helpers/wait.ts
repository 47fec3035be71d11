/** Waiting on a condition with a deadline (never a fixed sleep standing in for one). */

export interface Waited<T> {
  value: T;
  /** Whether `done` held before the deadline. */
  met: boolean;
  /** Milliseconds from the call until `done` held (or the deadline passed). */
  elapsedMs: number;
}

/** Reads until `done(value)` holds or `deadlineMs` passes, every `everyMs`. */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, deadlineMs: number, everyMs = 20): Promise<Waited<T>> {
  const start = performance.now();
  for (;;) {
    const value = await read();
    const elapsedMs = performance.now() - start;
    if (done(value)) return { value, met: true, elapsedMs };
    if (elapsedMs >= deadlineMs) return { value, met: false, elapsedMs };
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves once the clock has passed every timestamp given (so the next write stamps a later time). */
export async function clockPast(isoTimes: (string | undefined)[]): Promise<void> {
  const latest = Math.max(0, ...isoTimes.map((t) => (t ? Date.parse(t) : 0)));
  const waited = await waitFor(async () => Date.now(), (now) => now > latest, 5_000, 1);
  if (!waited.met) throw new Error(`the clock did not pass ${new Date(latest).toISOString()}`);
}

/**
 * waitFor for a step the test cannot go on without: the first value `probe` gives that is
 * neither undefined nor false (a probe that throws has not given one yet), with the time it
 * took; at the deadline the test fails, naming `what`.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  deadlineMs = 30_000,
  everyMs = 20,
): Promise<Waited<T>> {
  const waited = await waitFor(
    async () => {
      try {
        return await probe();
      } catch {
        return undefined;
      }
    },
    (v) => v !== undefined && v !== false,
    deadlineMs,
    everyMs,
  );
  if (!waited.met) throw new Error(`${what}: not within ${deadlineMs} ms`);
  return waited as Waited<T>;
}

/**
 * A client's pause before it sends a request again: the Retry-After the service answered, or a
 * retry's jitter. The protocol's wait, not a stand-in for a condition.
 */
export function retryPause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
