/** The service's node flags (its young generation, docs/adr/0135) are the same wherever it is started. */
import fs from 'node:fs';
import { expect } from 'chai';
import { startFlags } from '../../bench/service-process.js';

describe('the node flags the service runs with', () => {
  it('npm start holds the young generation to 16 MB semi-spaces', () => {
    expect(startFlags()).to.include('--max-semi-space-size=16');
  });

  it('the image runs the same flags as npm start, and the deploy guide says them', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(fs.readFileSync('Dockerfile', 'utf8'));
    expect(cmd, 'a CMD in the Dockerfile').to.not.equal(null);
    expect(JSON.parse(cmd![1])).to.deep.equal(['node', ...startFlags(), 'dist/main.js']);
    expect(fs.readFileSync('docs/deploy.md', 'utf8')).to.include(`node ${startFlags().join(' ')} dist/main.js`);
  });
});
