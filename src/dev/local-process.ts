/** The processes the development and test tools start and stop (Elasticsearch nodes, Keycloak). */
import fs from 'node:fs';

/** Whether a process of that id lives. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The last lines of a log file, for an error saying why a process did not start. */
export function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function signal(pid: number, sig: NodeJS.Signals, group: boolean): void {
  if (group) {
    try {
      process.kill(-pid, sig);
      return;
    } catch {
      /* not a group leader: the process alone */
    }
  }
  process.kill(pid, sig);
}

/**
 * Ends the process with SIGTERM, and with SIGKILL when it outlives `timeoutMs`. `group` ends
 * its whole process group (a launcher script whose JVM is its child).
 */
export async function stopProcess(pid: number, opts: { timeoutMs?: number; group?: boolean } = {}): Promise<void> {
  if (!alive(pid)) return;
  const group = opts.group ?? false;
  signal(pid, 'SIGTERM', group);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (alive(pid)) signal(pid, 'SIGKILL', group);
}
