/** CPU and memory of a process from /proc (Linux): the service's cost beside its throughput. */
import fs from 'node:fs';
import os from 'node:os';
import type { Client } from '@elastic/elasticsearch';

const TICKS = 100; // USER_HZ on Linux

export interface ProcSample {
  cpuSeconds: number;
  rssMb: number;
  peakRssMb: number;
  at: number;
}

export function sample(pid: number): ProcSample {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuSeconds: (utime + stime) / TICKS, rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024, at: Date.now() };
}

/** CPU use between two samples, in % of one core. */
export function cpuPercent(a: ProcSample, b: ProcSample): number {
  return (100 * (b.cpuSeconds - a.cpuSeconds)) / Math.max(0.001, (b.at - a.at) / 1000);
}

/** Samples RSS every `ms` while running; returns the highest seen. */
export function watchRss(pid: number, ms = 200): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, sample(pid).rssMb);
    } catch {
      /* process gone */
    }
  }, ms);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

export function machine(): Record<string, unknown> {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/**
 * The version of the Elasticsearch node behind `client`, and its pid when it runs on this
 * machine (for its CPU use). (`GET /` is not served by the minimal distribution.)
 */
export async function esNode(client: Client): Promise<{ version: string; pid?: number }> {
  const res = await client.nodes.info({ node_id: '_local', metric: 'process' });
  const node = Object.values(res.nodes)[0];
  const pid = node?.process?.id;
  return { version: node?.version ?? '?', ...(pid && fs.existsSync(`/proc/${pid}/stat`) ? { pid } : {}) };
}

/** CPU seconds of a process (or undefined when it cannot be read). */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    return sample(pid).cpuSeconds;
  } catch {
    return undefined;
  }
}
