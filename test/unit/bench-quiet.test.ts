/**
 * The bench's quietness check (bench/quiet.ts): CPU used by a process outside the bench's own
 * tree voids a scenario's ratios; the bench's own children never count against it.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { expect } from 'chai';
import { watchQuiet, VOID_ABOVE_PERCENT } from '../../bench/quiet.js';
import { waitFor } from '../helpers/wait.js';

const alive = (pid: number): boolean => fs.existsSync(`/proc/${pid}`);

describe('bench quietness', function () {
  this.timeout(30_000);

  it('counts a busy process outside the bench and voids the scenario', async () => {
    const quiet = watchQuiet(undefined);
    // The subshell exits at once, so the busy loop is reparented away from this process: an outsider.
    const out = spawnSync('sh', ['-c', "timeout 1.5 sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!"], { encoding: 'utf8' });
    const pid = Number(out.stdout.trim());
    expect(pid).to.be.greaterThan(0);
    const gone = await waitFor(async () => alive(pid), (a) => !a, 10_000);
    expect(gone.met, 'the busy loop ended').to.equal(true);
    const q = quiet.stop();
    expect(q.othersCpuPercent).to.be.greaterThan(VOID_ABOVE_PERCENT);
    expect(q.void).to.equal(true);
    expect(q.loadAverageStart).to.have.length(3);
  });

  it('does not count the bench’s own children', async () => {
    const quiet = watchQuiet(undefined);
    const child = spawn('sh', ['-c', 'while :; do :; done']);
    try {
      const pid = child.pid as number;
      const cpu = (): number => {
        const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return (Number(f[11]) + Number(f[12])) / 100;
      };
      // Stopped while the child still runs and has used the better part of a core.
      const busy = await waitFor(async () => cpu(), (s) => s >= 0.5, 10_000);
      expect(busy.met, 'the child used CPU').to.equal(true);
      const q = quiet.stop();
      expect(Object.keys(q.busiest).filter((k) => k.endsWith(`(${pid})`))).to.deep.equal([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
