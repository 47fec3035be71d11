/**
 * One lifecycle for background work: tasks start in order and stop in reverse, and every task
 * the container lists (every service that starts and stops itself among them) is stopped once
 * started.
 */
import { expect } from 'chai';
import { backgroundTasks } from '../../src/container.js';
import { Lifecycle, type Task } from '../../src/lifecycle.js';
import { offlineServices } from '../helpers/offline-services.js';

/** A task that writes its starts and stops to `log`; its stop resolves on the next turn. */
function recorded(name: string, log: string[], failStop = false): Task {
  return {
    name,
    start: () => void log.push(`start ${name}`),
    stop: async () => {
      await new Promise((r) => setImmediate(r));
      log.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} would not stop`);
    },
  };
}

describe('lifecycle: background tasks start in order and stop in reverse', () => {
  it('starts in order, stops in reverse, each stop awaited before the next', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle(['a', 'b', 'c'].map((n) => recorded(n, log)));
    lifecycle.start();
    expect(lifecycle.running).to.deep.equal(['a', 'b', 'c']);
    await lifecycle.stop();
    expect(log).to.deep.equal(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
    expect(lifecycle.running).to.deep.equal([]);
  });

  it('stops only what it started, and a second start does not start a task twice', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([recorded('a', log)]);
    await lifecycle.stop();
    expect(log).to.deep.equal([]);
    lifecycle.start();
    lifecycle.start();
    await lifecycle.stop();
    expect(log).to.deep.equal(['start a', 'stop a']);
  });

  it('a task whose stop fails does not keep the others running', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle([recorded('a', log), recorded('b', log, true), recorded('c', log)]);
    lifecycle.start();
    const err = await lifecycle.stop().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.equal('b would not stop');
    expect(log.slice(3)).to.deep.equal(['stop c', 'stop b', 'stop a']);
    expect(lifecycle.running).to.deep.equal([]);
  });

  describe("the container's tasks", () => {
    // Nothing answers the store's address: a task's first run fails fast and is logged (silently here).
    const { services, close } = offlineServices();
    after(close);

    it('lists every service that starts and stops itself', () => {
      const listed = new Set(backgroundTasks(services).flatMap((t) => ('of' in t ? [t.of] : [])));
      const startable = (v: unknown): v is { start(): void; stop(): void } =>
        typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>).start === 'function' && typeof (v as Record<string, unknown>).stop === 'function';
      const candidates = [...Object.entries(services), ...Object.entries(services.jobs).map(([k, v]) => [`jobs.${k}`, v] as const)];
      const missing = candidates.filter(([, v]) => startable(v) && !listed.has(v)).map(([k]) => k);
      expect(missing).to.deep.equal([]);
      expect(listed.has(services.jobs.retention), 'the job retention').to.equal(true);
    });

    it('stops every task it started, in reverse order', async () => {
      const log: string[] = [];
      const tasks = backgroundTasks(services).map(
        (t): Task => ({
          name: t.name,
          start: () => {
            t.start();
            log.push(`start ${t.name}`);
          },
          stop: async () => {
            await t.stop();
            log.push(`stop ${t.name}`);
          },
        }),
      );
      const lifecycle = new Lifecycle(tasks);
      lifecycle.start();
      await lifecycle.stop();
      const names = tasks.map((t) => t.name);
      expect(log).to.deep.equal([...names.map((n) => `start ${n}`), ...[...names].reverse().map((n) => `stop ${n}`)]);
      expect(names).to.include.members(['job runner', 'job retention', 'change feed poll', 'sweep of ended login sessions']);
    });
  });
});
