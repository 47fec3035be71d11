/**
 * The floor: the same Elasticsearch operation issued directly, at the same concurrency, for
 * the same duration, measured the same way (requests/s and latency percentiles).
 */
export interface RoundResult {
  requests: number;
  errors: number;
  durationS: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs `op(i)` from `connections` workers for `seconds`; `i` is a global request counter.
 * With `rate`, requests start at that overall rate (as autocannon's overallRate: a worker
 * waits for its slot, then for its answer), else each worker sends as fast as answers come.
 */
export async function runDirect(
  op: (i: number) => Promise<unknown>,
  connections: number,
  seconds: number,
  rate?: number,
): Promise<RoundResult> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const i = counter++;
        if (rate) {
          const due = start + (i * 1000) / rate;
          if (due >= deadline) break;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const t0 = performance.now();
        try {
          await op(i);
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const durationS = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    durationS,
    rps: latencies.length / durationS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
  };
}
