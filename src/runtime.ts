/** Process-wide runtime settings shared by the entry points (the service and the ops CLI). */
import v8 from 'node:v8';

/**
 * Bounded memory: under a high allocation rate V8 lets the old generation grow to up to 4× its
 * live size between major collections. 1.75× keeps a process's peak near its live set; since a
 * request's objects no longer outlive the young generation (docs/adr/0154), it costs about the CPU
 * 2× did, and 1.5× still paid a major collection every second or so on the hot paths
 * (docs/adr/0155-the-old-generation-grows-by-three-quarters.md). A flag given on the command line
 * or in NODE_OPTIONS wins.
 */
export function boundHeapGrowth(percent = 75): void {
  if ([...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
