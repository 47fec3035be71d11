/**
 * Open-loop load for the overload scenario (bench/overload.ts): requests offered on schedule,
 * whatever happened to the previous ones, so a late answer does not slow the offer down (no
 * coordinated omission). `openLoopInWorker` runs a generator on a worker thread of its own, so
 * that a flood it drives (thousands of answers a second) does not delay the event loop that
 * times another generator's requests (the agents').
 */
import http from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface OpenLoopResult {
  offered: number;
  /** Offered but not sent: the generator's in-flight cap was reached (counts as not served). */
  notSent: number;
  ok: number;
  shed: number;
  other: number;
  okP50: number;
  okP99: number;
  shedP99: number;
  servedRatio: number;
  /** Raw latencies (ms), for pooling rounds; dropped before results are written. */
  samples?: { ok: number[]; shed: number[] };
}

/** Several rounds of the same load as one result (percentiles over all their answers). */
export function pool(rounds: OpenLoopResult[]): OpenLoopResult {
  const ok = rounds.flatMap((r) => r.samples?.ok ?? []);
  const shed = rounds.flatMap((r) => r.samples?.shed ?? []);
  const sum = (k: 'offered' | 'notSent' | 'other'): number => rounds.reduce((a, r) => a + r[k], 0);
  const offered = sum('offered');
  return {
    offered,
    notSent: sum('notSent'),
    ok: ok.length,
    shed: shed.length,
    other: sum('other'),
    okP50: pct(ok, 50),
    okP99: pct(ok, 99),
    shedP99: pct(shed, 99),
    servedRatio: offered === 0 ? 0 : ok.length / offered,
  };
}

/** Without its raw samples (for the results file). */
export function summary(r: OpenLoopResult): OpenLoopResult {
  const { samples: _samples, ...rest } = r;
  return rest;
}

export interface Req {
  method: string;
  path: string;
  token: string;
  body?: string;
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};

/** Offers `rate` requests a second for `seconds`, at most `maxInFlight` at once. */
export function openLoop(url: string, rate: number, seconds: number, maxInFlight: number, make: (i: number) => Req): Promise<OpenLoopResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: maxInFlight });
  const target = new URL(url);
  const okMs: number[] = [];
  const shedMs: number[] = [];
  let offered = 0;
  let notSent = 0;
  let other = 0;
  let inFlight = 0;
  const start = performance.now();
  return new Promise((resolve) => {
    const finish = (): void => {
      if (performance.now() - start < seconds * 1000 || inFlight > 0) return;
      agent.destroy();
      const served = okMs.length;
      resolve({
        offered,
        notSent,
        ok: served,
        shed: shedMs.length,
        other,
        okP50: pct(okMs, 50),
        okP99: pct(okMs, 99),
        shedP99: pct(shedMs, 99),
        servedRatio: offered === 0 ? 0 : served / offered,
        samples: { ok: okMs, shed: shedMs },
      });
    };
    const send = (r: Req): void => {
      inFlight += 1;
      const t0 = performance.now();
      const headers: Record<string, string> = { 'x-auth-token': r.token };
      if (r.body) headers['content-type'] = 'application/json';
      const req = http.request({ host: target.hostname, port: target.port, method: r.method, path: r.path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          const ms = performance.now() - t0;
          const s = res.statusCode ?? 0;
          if (s < 300) okMs.push(ms);
          else if (s === 429 || s === 503) shedMs.push(ms);
          else other += 1;
          inFlight -= 1;
          finish();
        });
      });
      req.on('error', () => {
        other += 1;
        inFlight -= 1;
        finish();
      });
      req.end(r.body);
    };
    const timer = setInterval(() => {
      const elapsed = (performance.now() - start) / 1000;
      if (elapsed >= seconds) {
        clearInterval(timer);
        finish();
        return;
      }
      const due = Math.floor(elapsed * rate);
      while (offered < due) {
        const i = offered++;
        if (inFlight >= maxInFlight) notSent += 1;
        else send(make(i));
      }
    }, 5);
  });
}


interface WorkerJob {
  url: string;
  rate: number;
  seconds: number;
  maxInFlight: number;
  /** Requests offered in turn (request i is requests[i % length]). */
  requests: Req[];
}

/** `openLoop` on a worker thread of its own; the requests are offered in turn. */
export function openLoopInWorker(url: string, rate: number, seconds: number, maxInFlight: number, requests: Req[]): Promise<OpenLoopResult> {
  const job: WorkerJob = { url, rate, seconds, maxInFlight, requests };
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: job });
    w.once('message', (r: OpenLoopResult) => resolve(r));
    w.once('error', reject);
    w.once('exit', (code) => {
      if (code !== 0) reject(new Error(`open-loop worker exited with ${code}`));
    });
  });
}

if (!isMainThread && parentPort) {
  const job = workerData as WorkerJob;
  const port = parentPort;
  void openLoop(job.url, job.rate, job.seconds, job.maxInFlight, (i) => job.requests[i % job.requests.length]).then((r) => port.postMessage(r));
}
