/**
 * How alone a measurement was: the load average and the CPU that every process outside the
 * bench used over a scenario, read from /proc. A figure taken while something else used more
 * than a tenth of a core is a direction, not a result: its ratios are marked void.
 */
import fs from 'node:fs';
import os from 'node:os';

const TICKS = 100; // USER_HZ on Linux
/** Others' CPU (% of one core) above which a scenario's ratios are void. */
export const VOID_ABOVE_PERCENT = 10;

export interface Quietness {
  loadAverageStart: number[];
  loadAverageEnd: number[];
  /** CPU used by processes outside the bench (its own process tree and the store's), % of one core. */
  othersCpuPercent: number;
  /** The processes that used the most of it: `name(pid)` → % of one core. */
  busiest: Record<string, number>;
  /** True when others used more than VOID_ABOVE_PERCENT: the scenario's ratios are not reported as results. */
  void: boolean;
}

interface ProcCpu {
  ppid: number;
  name: string;
  cpuSeconds: number;
}

function processes(): Map<number, ProcCpu> {
  const out = new Map<number, ProcCpu>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      out.set(Number(entry), {
        ppid: Number(fields[1]),
        name: stat.slice(stat.indexOf('(') + 1, close),
        // Its own time and that of the children it reaped: a process that ran and ended in between still counts.
        cpuSeconds: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS,
      });
    } catch {
      // gone between the listing and the read
    }
  }
  return out;
}

/** The pids outside the trees rooted at `roots` (the bench itself and the store it measures). */
function outsiders(all: Map<number, ProcCpu>, roots: number[]): number[] {
  const inside = new Set(roots);
  const isInside = (pid: number, depth = 0): boolean => {
    if (inside.has(pid)) return true;
    const p = all.get(pid);
    if (!p || p.ppid <= 1 || depth > 64) return false;
    const yes = isInside(p.ppid, depth + 1);
    if (yes) inside.add(pid);
    return yes;
  };
  return [...all.keys()].filter((pid) => !isInside(pid));
}

/** Starts watching; `stop()` answers how quiet the machine was since. */
export function watchQuiet(storePid: number | undefined): { stop(): Quietness } {
  const roots = [process.pid, ...(storePid ? [storePid] : [])];
  const loadAverageStart = os.loadavg();
  const t0 = Date.now();
  const before = processes();
  return {
    stop(): Quietness {
      const after = processes();
      const seconds = Math.max(0.001, (Date.now() - t0) / 1000);
      const used: [string, number][] = [];
      for (const pid of outsiders(after, roots)) {
        const a = after.get(pid) as ProcCpu;
        // A process born during the scenario counts from zero.
        const delta = a.cpuSeconds - (before.get(pid)?.cpuSeconds ?? 0);
        if (delta > 0) used.push([`${a.name}(${pid})`, (100 * delta) / seconds]);
      }
      used.sort((x, y) => y[1] - x[1]);
      const othersCpuPercent = used.reduce((s, [, p]) => s + p, 0);
      return {
        loadAverageStart: loadAverageStart.map(round2),
        loadAverageEnd: os.loadavg().map(round2),
        othersCpuPercent: round2(othersCpuPercent),
        busiest: Object.fromEntries(used.slice(0, 5).map(([n, p]) => [n, round2(p)])),
        void: othersCpuPercent > VOID_ABOVE_PERCENT,
      };
    },
  };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** `min–max` of a list of rates, for a table's spread column. */
export function spread(xs: number[]): string {
  if (xs.length === 0) return '-';
  return `${Math.round(Math.min(...xs)).toLocaleString('en-US')}–${Math.round(Math.max(...xs)).toLocaleString('en-US')}`;
}
