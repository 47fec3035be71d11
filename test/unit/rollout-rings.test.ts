/** Ring membership, maintenance windows and the gate's verdict: pure rules of rollouts. */
import { expect } from 'chai';
import { hashBucket, mayUpgrade, ringOf } from '../../src/resources/rollouts/rings.js';
import { addOutcome, emptyTally, verdict } from '../../src/resources/rollouts/judge.js';

describe('rollout rings and gates', () => {
  const ids = Array.from({ length: 20_000 }, (_, i) => `ep-${i}`);

  it('a percent ring takes about its share by a hash of the id alone, the same on every call, and each ring adds to the ones before', () => {
    const rings = [{ percent: 5 }, { percent: 50 }, { percent: 100 }];
    const counts = [0, 0, 0];
    for (const id of ids) counts[ringOf(rings, id, ['root'])]++;
    expect(counts[0]).to.be.within(800, 1200);
    expect(counts[0] + counts[1]).to.be.within(9400, 10_600);
    expect(counts[0] + counts[1] + counts[2]).to.equal(ids.length);
    for (const id of ids.slice(0, 100)) expect(hashBucket(id)).to.equal(hashBucket(id));
  });

  it('an organization ring takes its subtree first; a later percent ring never takes them again', () => {
    const rings = [{ orgIds: ['test'] }, { percent: 100 }];
    expect(ringOf(rings, 'ep-1', ['msp', 'test', 'site'])).to.equal(0);
    expect(ringOf(rings, 'ep-1', ['msp', 'cust'])).to.equal(1);
    expect(ringOf([{ percent: 1 }], ids.find((id) => hashBucket(id) >= 100) ?? '', ['msp'])).to.equal(-1);
  });

  it('the windows of the nearest organization that has some decide; none: always', () => {
    const at = new Date('2026-11-25T10:00:00Z'); // Wednesday
    const closed = { orgId: 'cust', days: ['WED' as const], start: '22:00', end: '23:00', timeZone: 'UTC' };
    const open = { orgId: 'site', days: ['WED' as const], start: '09:00', end: '11:00', timeZone: 'UTC' };
    expect(mayUpgrade([closed], ['msp', 'cust', 'site'], at)).to.equal(false);
    expect(mayUpgrade([closed, open], ['msp', 'cust', 'site'], at)).to.equal(true);
    expect(mayUpgrade([closed], ['msp', 'other'], at)).to.equal(true);
  });

  it('the gate waits for the soak, passes at its share, fails once the share is out of reach or its time is up', () => {
    const gate = { minHealthyPercent: 80, withinSeconds: 60 };
    const t = emptyTally();
    for (const o of ['healthy', 'healthy', 'healthy', 'pending', 'pending-away'] as const) addOutcome(t, o);
    expect(verdict(0, t, gate, false, false).kind).to.equal('wait');
    expect(verdict(0, t, gate, true, false).kind, '3 of 4 healthy, one still within its time').to.equal('wait');
    expect(verdict(0, t, gate, true, true)).to.deep.equal({ kind: 'fail', reason: 'ring 1: 75 % healthy of 4, gate 80 %' });
    addOutcome(t, 'healthy');
    expect(verdict(1, t, gate, true, false)).to.deep.equal({ kind: 'pass', reason: 'ring 2: 80 % healthy of 5, gate 80 %' });
    const bad = emptyTally();
    for (const o of ['failed', 'failed', 'healthy', 'pending'] as const) addOutcome(bad, o);
    expect(verdict(0, bad, gate, true, false).kind, 'out of reach').to.equal('fail');
  });
});
