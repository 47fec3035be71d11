/**
 * The linearizability check the concurrency models rely on (test/helpers/model/linearize.ts):
 * it must refuse the histories a correct service cannot produce — two winners of one version,
 * a stale read's write accepted, a lost update, an answer that contradicts real-time order —
 * and accept every history some sequential order explains, including one with a lost answer.
 */
import { expect } from 'chai';
import { linearize, type Model, type Op } from '../helpers/model/linearize.js';

/** A register with a version: a write carrying the current version wins (200) and bumps it, any other is 409. */
interface Reg {
  version: number;
  value: string;
}
type Write = { sent: number; value: string };
type Ans = { status: number };

const register: Model<Reg, Write, Ans> = {
  step(s, w, a) {
    if (w.sent !== s.version) return a === undefined || a.status === 409 ? s : undefined;
    if (a !== undefined && a.status !== 200) return undefined;
    return { version: s.version + 1, value: w.value };
  },
};

const op = (invokedAt: number, answeredAt: number, sent: number, value: string, status?: number): Op<Write, Ans> => ({
  caller: 0,
  input: { sent, value },
  invokedAt,
  answeredAt,
  ...(status === undefined ? {} : { answer: { status } }),
});

const start: Reg = { version: 1, value: 'a' };
const endsIn = (value: string, version: number) => (s: Reg) => s.value === value && s.version === version;

describe('linearizability check', () => {
  it('accepts one winner of a version among concurrent writers, in whichever order they overlapped', () => {
    const h = [op(1, 6, 1, 'x', 409), op(2, 5, 1, 'y', 200), op(3, 4, 1, 'z', 409)];
    const found = linearize(register, start, h, endsIn('y', 2));
    expect(found?.order[0]).to.equal(1);
  });

  it('refuses two winners of one version', () => {
    const h = [op(1, 4, 1, 'x', 200), op(2, 3, 1, 'y', 200)];
    expect(linearize(register, start, h, () => true)).to.equal(undefined);
  });

  it('refuses a lost update: the final state is not the last winner', () => {
    const h = [op(1, 2, 1, 'x', 200), op(3, 4, 2, 'y', 200)];
    expect(linearize(register, start, h, endsIn('x', 3))).to.equal(undefined);
    expect(linearize(register, start, h, endsIn('y', 3))).to.not.equal(undefined);
  });

  it('refuses an order real time forbids: a write answered 409 before its rival was even sent', () => {
    const h = [op(1, 2, 1, 'x', 409), op(3, 4, 1, 'y', 200)];
    expect(linearize(register, start, h, () => true)).to.equal(undefined);
  });

  it('lets an operation whose answer was lost have happened or not, whichever the final state says', () => {
    const h = [op(1, 5, 1, 'x'), op(2, 3, 1, 'y', 409)];
    expect(linearize(register, start, h, endsIn('x', 2))).to.not.equal(undefined);
    expect(linearize(register, start, h, endsIn('a', 1))).to.equal(undefined);
    const never = [op(1, 5, 1, 'x'), op(2, 3, 1, 'y', 200)];
    expect(linearize(register, start, never, endsIn('y', 2))).to.not.equal(undefined);
  });
});
