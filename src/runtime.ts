/** Process-wide runtime settings shared by the entry points (the service and the ops CLI). */
import v8 from 'node:v8';

/**
 * Bounded memory (docs/adr/0032-compiled-runtime-and-image.md): under a high allocation rate V8 lets the old
 * generation grow to up to 4× its live size between major collections; 1.5× keeps a process
 * near its live set for a few per cent more GC time. A flag given on the command line or in
 * NODE_OPTIONS wins.
 */
export function boundHeapGrowth(percent = 50): void {
  if ([...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
