/** Process-wide runtime settings shared by the entry points (the service and the ops CLI). */
import v8 from 'node:v8';

/**
 * Bounded memory: under a high allocation rate V8 lets the old generation grow to up to 4× its
 * live size between major collections. 2× keeps a process near its live set; 1.5× did too, but a
 * report's objects outlive the young generation under load, and at 1.5× their promotion paid a
 * major collection every few hundred milliseconds (docs/adr/0146-the-old-generation-may-double.md).
 * A flag given on the command line or in NODE_OPTIONS wins.
 */
export function boundHeapGrowth(percent = 100): void {
  if ([...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
