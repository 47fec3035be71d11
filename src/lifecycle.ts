/**
 * One lifecycle for an instance's background work: the tasks are started in the order listed
 * and stopped in reverse, each stop awaited before the next, so a task never outlives one it
 * depends on. A task is stopped only when it was started; every started task is stopped.
 */

/** A piece of background work (a schedule, a poll, a sweep) as the lifecycle sees it. */
export interface Task {
  /** What it is, for logs and tests ("change feed poll", "job retention"). */
  readonly name: string;
  start(): void;
  stop(): void | Promise<void>;
}

/** A task of an object that starts and stops itself (most background work does). */
export function taskOf(name: string, of: { start(): void; stop(): void | Promise<void> }): Task & { readonly of: object } {
  return { name, of, start: () => of.start(), stop: () => of.stop() };
}

export class Lifecycle {
  private readonly started: Task[] = [];

  constructor(readonly tasks: readonly Task[]) {}

  /** Starts every task not yet started, in order. */
  start(): void {
    for (const task of this.tasks) {
      if (this.started.includes(task)) continue;
      task.start();
      this.started.push(task);
    }
  }

  /** Stops the started tasks in reverse order, each awaited; a failing stop does not keep the others running. */
  async stop(): Promise<void> {
    const failures: unknown[] = [];
    while (this.started.length > 0) {
      const task = this.started.pop()!;
      try {
        await task.stop();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, 'several background tasks failed to stop');
  }

  /** The names of the tasks running now, in start order. */
  get running(): string[] {
    return this.started.map((t) => t.name);
  }
}
