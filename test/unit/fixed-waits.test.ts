/**
 * Tests wait on conditions, never on fixed sleeps (CONTRIBUTING): every file under test/ is
 * searched for a timer standing in for a condition. test/helpers/wait.ts is the one place that
 * waits — `waitFor` and `until` between reads of a condition, `retryPause` for a client's
 * Retry-After — and the planted lines prove the search bites.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const WAIT_HELPERS = 'test/helpers/wait.ts';

// The planted lines are assembled, so this file holds none of the forms it proves the search finds.
const TIMER = ['set', 'Timeout'].join('');
const TIMERS_MODULE = ['node:timers', 'promises'].join('/');
const [SLEEP, PAUSE] = [['sl', 'eep'], ['pa', 'use']].map((w) => w.join(''));

/** The forms of a fixed wait: a promise a timer resolves, the promise-returning timers, a sleep-like call. */
const FIXED_WAITS: { rule: string; pattern: RegExp }[] = [
  { rule: 'a promise resolved by a timer', pattern: new RegExp(`new Promise\\b[^;]*\\b${TIMER}\\s*\\(`) },
  { rule: 'a timer handed a resolve function', pattern: new RegExp(`\\b${TIMER}\\s*\\(\\s*(r|res|resolve|done|ok|wake)\\s*,`) },
  { rule: 'the promise-returning timers', pattern: /from\s+['"](node:)?timers\/promises['"]/ },
  { rule: 'a sleep-like call', pattern: /\bawait\s+(sleep|pause|delay|wait)\s*\(/ },
];

interface FixedWait {
  file: string;
  line: number;
  rule: string;
  text: string;
}

/** The fixed waits in `text` (a test file's source). */
function findFixedWaits(text: string, file: string): FixedWait[] {
  const out: FixedWait[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { rule, pattern } of FIXED_WAITS) {
      if (pattern.test(line)) out.push({ file, line: i + 1, rule, text: line.trim() });
    }
  });
  return out;
}

function testFiles(dir = 'test'): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return /\.(ts|tsx|js|mjs)$/.test(e.name) ? [p] : [];
  });
}

describe('tests wait on conditions, never on fixed sleeps', () => {
  it('finds no fixed wait in any test file outside test/helpers/wait.ts', () => {
    const files = testFiles().filter((f) => f !== WAIT_HELPERS);
    expect(files).to.include.members(['test/api/secrets.test.ts', 'test/api/store-outage.test.ts', 'test/unit/periodic.test.ts']);
    const found = files.flatMap((f) => findFixedWaits(fs.readFileSync(f, 'utf8'), f));
    expect(found.map((w) => `${w.file}:${w.line} ${w.rule}: ${w.text}`)).to.deep.equal([]);
  });

  it('bites on a planted fixed wait of each form', () => {
    const planted = [
      `    await new Promise((r) => ${TIMER}(r, 1100));`,
      `    await new Promise<void>((resolve) => ${TIMER}(resolve, 250));`,
      `    const nap = new Promise((r) => { ${TIMER}(r, 500); });`,
      `import { ${TIMER} as delay } from '${TIMERS_MODULE}';`,
      `    await ${SLEEP}(500);`,
      `    await ${PAUSE}(Number(res.headers.get('retry-after')) * 1000);`,
    ];
    expect(planted.map((line) => findFixedWaits(line, 'test/api/sample.test.ts').map((w) => w.rule))).to.deep.equal([
      ['a promise resolved by a timer', 'a timer handed a resolve function'],
      ['a promise resolved by a timer', 'a timer handed a resolve function'],
      ['a promise resolved by a timer', 'a timer handed a resolve function'],
      ['the promise-returning timers'],
      ['a sleep-like call'],
      ['a sleep-like call'],
    ]);
  });

  it('leaves timers that schedule work alone: a delayed answer, a give-up deadline, a cleared interval', () => {
    const fine = [
      `      ${TIMER}(() => { up.end(body); }, state.delayMs);`,
      `    const giveUp = ${TIMER}(() => finish(false), giveUpMs);`,
      `    clearTimeout(giveUp);`,
      `    await until('the token expires', async () => (await get()).status === 401, 10_000, 100);`,
    ];
    expect(fine.flatMap((line) => findFixedWaits(line, 'test/api/sample.test.ts'))).to.deep.equal([]);
  });
});
