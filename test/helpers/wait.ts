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
