/**
 * The service's standard output written in blocks (src/log.ts, docs/adr/0136-a-requests-framework-cpu.md):
 * a line reaches the reader within the flush interval while the process runs, and every line is
 * written when the process ends, however it ends short of being killed outright.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { waitFor } from '../helpers/wait.js';

const LOG = new URL('../../src/log.ts', import.meta.url).href;

/** A node child running `body` with `log` (createLogger on bufferedStdout) in scope; its stdout as it arrives. */
function child(body: string): { out: () => string; exited: Promise<number | null>; kill: () => void } {
  const script = `import { bufferedStdout, createLogger } from ${JSON.stringify(LOG)};
const log = createLogger('info', bufferedStdout(200), 'json');
${body}`;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  proc.stdout.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  return { out: () => text, exited, kill: () => proc.kill() };
}

const lines = (text: string): { msg: string }[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string });

describe('the service log written in blocks', function () {
  this.timeout(20_000);

  it('writes a line that fills no block within the flush interval, while the process runs on', async () => {
    const c = child(`log.info('first'); setTimeout(() => process.exit(0), 10_000);`);
    const seen = await waitFor(async () => c.out(), (t) => t.includes('first'), 5_000);
    expect(seen.met, 'the line was written while the process ran').to.equal(true);
    expect(lines(seen.value).map((l) => l.msg)).to.deep.equal(['first']);
    c.kill();
    await c.exited;
  });

  it('writes every line when the process exits at once, and keeps their order', async () => {
    const c = child(`for (let i = 0; i < 1000; i++) log.info('line ' + i); process.exit(3);`);
    expect(await c.exited).to.equal(3);
    expect(lines(c.out()).map((l) => l.msg)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => `line ${i}`));
  });

  it('writes the lines before an uncaught exception ends the process', async () => {
    const c = child(`log.info('before'); log.error('about to fail'); setImmediate(() => { throw new Error('boom'); });`);
    expect(await c.exited).to.not.equal(0);
    expect(lines(c.out()).map((l) => l.msg)).to.deep.equal(['before', 'about to fail']);
  });
});
