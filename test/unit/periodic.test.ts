/**
 * The one schedule of every background task (src/periodic.ts): runs never overlap, a wake
 * during a run adds exactly one run right after it, a failed run is logged and the schedule
 * goes on, and a stop (even one followed at once by a start) leaves a single schedule.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { Periodic } from '../../src/periodic.js';
import { until } from '../helpers/wait.js';

/** A run the test ends by hand, so it decides what is in progress. */
interface Gate {
  started: number;
  inFlight: number;
  maxInFlight: number;
  /** Ends the oldest run in progress (with a failure when `fail`). */
  release(fail?: boolean): void;
  run(): Promise<void>;
}

function gate(): Gate {
  const waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const g: Gate = {
    started: 0,
    inFlight: 0,
    maxInFlight: 0,
    release(fail = false) {
      const w = waiting.shift();
      if (!w) throw new Error('no run in progress');
      if (fail) w.reject(new Error('store unreachable'));
      else w.resolve();
    },
    run() {
      g.started++;
      g.inFlight++;
      g.maxInFlight = Math.max(g.maxInFlight, g.inFlight);
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })).finally(() => g.inFlight--);
    },
  };
  return g;
}

function logs(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, log: createLogger('info', sink) };
}

describe('background tasks (Periodic)', () => {
  it('runs one at a time: a wake during a run adds one run right after it, however many wakes', async () => {
    const g = gate();
    const p = new Periodic('test task', 60_000, () => g.run(), logs().log);
    p.start();
    await until('the first run', () => g.started === 1, 2_000, 0);
    p.wake();
    p.wake();
    p.wake();
    g.release();
    await until('the run the wakes asked for', () => g.started === 2, 2_000, 0);
    g.release();
    await p.settled();
    // The next run is a minute away: nothing more started.
    expect(g.started).to.equal(2);
    expect(g.maxInFlight).to.equal(1);
    p.stop();
  });

  it('logs a failed run with what it was and keeps the schedule', async () => {
    const g = gate();
    const out = logs();
    const p = new Periodic('test task', 0, () => g.run(), out.log);
    p.start();
    await until('the first run', () => g.started === 1, 2_000, 0);
    g.release(true);
    await until('the run after the failure', () => g.started === 2, 2_000, 0);
    expect(out.lines.join('')).to.contain('test task failed; retrying next interval').and.contain('store unreachable');
    p.stop();
    g.release();
    await p.settled();
    expect(g.started).to.equal(2);
  });

  it('starts nothing after stop, and settled waits for the run in progress', async () => {
    const g = gate();
    const p = new Periodic('test task', 0, () => g.run(), logs().log);
    p.start();
    await until('the first run', () => g.started === 1, 2_000, 0);
    p.stop();
    p.wake();
    let settled = false;
    const done = p.settled().then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled, 'settled before the run ended').to.equal(false);
    g.release();
    await done;
    expect(g.started).to.equal(1);
  });

  it('a start right after a stop, while a run is in progress, keeps one schedule', async () => {
    const g = gate();
    const p = new Periodic('test task', 0, () => g.run(), logs().log);
    p.start();
    await until('the first run', () => g.started === 1, 2_000, 0);
    p.stop();
    p.start();
    for (let i = 2; i <= 5; i++) {
      g.release();
      await until(`run ${i}`, () => g.started === i, 2_000, 0);
      expect(g.inFlight).to.equal(1);
    }
    p.stop();
    g.release();
    await p.settled();
    expect(g.maxInFlight).to.equal(1);
  });

  it('waits its first delay before the first run', async () => {
    const g = gate();
    const p = new Periodic('test task', 0, () => g.run(), logs().log);
    p.start(60_000);
    await new Promise((r) => setImmediate(r));
    expect(g.started).to.equal(0);
    p.wake();
    await until('the woken run', () => g.started === 1, 2_000, 0);
    p.stop();
    g.release();
    await p.settled();
  });
});
