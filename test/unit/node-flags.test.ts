/**
 * The service's node flags (its young generation, docs/adr/0135) and the allocator's environment
 * (docs/adr/0145) are the same wherever it is started.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { assignments, startEnv, startFlags } from '../../bench/service-process.js';

/** The variables the Dockerfile's ENV lines set. */
function imageEnv(): Record<string, string> {
  const lines = fs.readFileSync('Dockerfile', 'utf8').split('\n').filter((l) => l.startsWith('ENV '));
  return assignments(lines.map((l) => l.slice(4)).join(' '));
}

describe('the node flags and environment the service runs with', () => {
  it('npm start holds the young generation to 16 MB semi-spaces', () => {
    expect(startFlags()).to.include('--max-semi-space-size=16');
  });

  it('npm start bounds the C allocator: two arenas, large buffers mapped on their own', () => {
    expect(startEnv()).to.deep.equal({ MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' });
  });

  it('the image runs the same flags and environment as npm start, and the deploy guide says them', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(fs.readFileSync('Dockerfile', 'utf8'));
    expect(cmd, 'a CMD in the Dockerfile').to.not.equal(null);
    expect(JSON.parse(cmd![1])).to.deep.equal(['node', ...startFlags(), 'dist/main.js']);
    expect(imageEnv()).to.include(startEnv());
    const assignments = Object.entries(startEnv()).map(([k, v]) => `${k}=${v}`);
    expect(fs.readFileSync('docs/deploy.md', 'utf8')).to.include(`${assignments.join(' ')} node ${startFlags().join(' ')} dist/main.js`);
  });
});
