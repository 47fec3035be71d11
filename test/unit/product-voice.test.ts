/**
 * The product speaks of itself only (test/helpers/product-voice.ts): no tracker numbers and no
 * words of how it was made in the shipped files, test names included, nor in the OpenAPI
 * document the service serves. The planted cases prove the check bites.
 */
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createClient } from '../../src/store/client.js';
import { findProcessWords, scanRepository, shippedFiles, showFindings } from '../helpers/product-voice.js';

// The planted lines are assembled, so this file holds none of the words it proves the check refuses.
const TRACKER = ['iss', 'ue'].join('');
const SITTING = ['sess', 'ion'].join('');
const MAKER = ['engin', 'eer'].join('');
const CHECKOUT = ['work', 'tree'].join('');
const PASS_WORD = ['rou', 'nd'].join('');

describe('the product speaks of itself only', function () {
  this.timeout(60_000);

  it('finds no tracker number and no word of how the product was made in the shipped files', () => {
    const files = shippedFiles();
    expect(files).to.include.members(['src/app.ts', 'README.md', 'test/unit/product-voice.test.ts', 'bench/run.ts']);
    expect(files.some((f) => f.startsWith('bench/results/'))).to.equal(false);
    const findings = scanRepository();
    expect(findings, showFindings(findings)).to.deep.equal([]);
  });

  it('finds none in the OpenAPI document built from the route declarations', () => {
    const client = createClient('http://127.0.0.1:9', 1000);
    const handle = createApp({
      config: loadConfig(),
      store: { client, prefix: 'voice', refresh: 'none' },
      log: createLogger('silent'),
    });
    void client.close();
    const findings = findProcessWords(JSON.stringify(handle.openapi, null, 2), 'openapi.json');
    expect(findings, showFindings(findings)).to.deep.equal([]);
  });

  it('bites on a planted line of each kind, in a comment, a test name and a document', () => {
    const planted = [
      `// Presence (${TRACKER} 16): a sign of life stamps lastSeen.`,
      `describe('admission lanes (I${TRACKER.slice(1)} 17)', () => {});`,
      `The spec is covered, ${TRACKER}s 12–17 aside.`,
      `Amended in ${SITTING} 6 after the merge.`,
      `Measured by the next ${SITTING} on a quiet machine.`,
      `While seven other ${MAKER}s ran their tests.`,
      `Each tree from its own ${CHECKOUT}.`,
      'How each choice was reached round by round.', // planted
      `Fixed in ${PASS_WORD} 5.`,
    ];
    const found = planted.map((line) => findProcessWords(line, 'docs/sample.md').map((f) => f.rule));
    expect(found).to.deep.equal([
      ['tracker number'],
      ['tracker number'],
      ['tracker number'],
      ['work session'],
      ['work session'],
      ['maker'],
      ['checkout'],
      ['work round'],
      ['work round'],
    ]);
  });

  it('leaves product words alone: login and database sessions, round trips, rounding, measurement rounds', () => {
    const fine = [
      "The token stays in this tab's session storage.",
      'A PostgreSQL session advisory lock guards the run.',
      "A person's login session ends at sign-out.",
      'One store round trip; round-robin over the nodes; Math.round(x).',
      'Copied again, round after round, until a round is small.',
      'The issue found on a degraded cluster.',
    ];
    expect(fine.flatMap((line) => findProcessWords(line, 'docs/sample.md'))).to.deep.equal([]);
  });

  it('lets an allowance through only in its own file', () => {
    const line = `Seven ${MAKER}s on call.`;
    const allowed = [{ file: /^docs\/people\.md$/, line: /on call/, why: 'a sample' }];
    expect(findProcessWords(line, 'docs/people.md', allowed)).to.deep.equal([]);
    expect(findProcessWords(line, 'docs/other.md', allowed)).to.have.length(1);
  });
});
