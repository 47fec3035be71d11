/**
 * The adaptive lane limits (src/http/admission.ts), driven by a test clock: handler times are
 * what the test says they are, so the rules are checked without timing anything.
 */
import { expect } from 'chai';
import { Admission, DEFAULT_LANES, type Lane } from '../../src/http/admission.js';
import { ServiceUnavailableError, TooManyRequestsError } from '../../src/errors.js';

function harness(opts: Partial<ConstructorParameters<typeof Admission>[0]> = {}): {
  a: Admission;
  call(lane: Lane, ms: number): Promise<void>;
} {
  let clock = 0;
  const a = new Admission({ enabled: true, now: () => clock, ...opts });
  return {
    a,
    call: (lane, ms) =>
      a.run(lane, 'caller', async () => {
        clock += ms;
      }),
  };
}

describe('admission lanes: adaptive limits', () => {
  it('a lane whose latency grows shrinks to its floor, and stays put while latency is steady', async () => {
    const { a, call } = harness();
    for (let i = 0; i < 50; i++) await call('heavy', 10);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.initial);
    for (let i = 0; i < 50; i++) await call('heavy', 100);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.min);
  });

  it("heavy work shrinks when the agents' latency grows, though its own does not; the agents keep their floor", async () => {
    const { a, call } = harness();
    for (let i = 0; i < 200; i++) {
      await call('agent', 5);
      await call('heavy', 10);
    }
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.initial);
    for (let i = 0; i < 50; i++) {
      await call('agent', 40);
      await call('heavy', 10);
    }
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.min);
    expect(a.lane('agent').limit).to.be.at.least(DEFAULT_LANES.agent.min);
  });

  it('a lane used to its limit with steady latency grows', async () => {
    let clock = 0;
    const a = new Admission({ enabled: true, now: () => clock });
    const start = DEFAULT_LANES.interactive.initial;
    for (let round = 0; round < 3; round++) {
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const calls = Array.from({ length: a.lane('interactive').limit }, (_, i) => a.run('interactive', `c${i}`, () => gate));
      clock += 10;
      open();
      await Promise.all(calls);
    }
    expect(a.lane('interactive').limit).to.be.greaterThan(start);
  });

  it('a full lane queues for its wait, then hands the freed slot to the oldest waiter', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { heavy: 1 }, queueMs: { heavy: 60_000 } });
    let open!: () => void;
    const first = a.run('heavy', 'x', () => new Promise<void>((r) => (open = r)));
    const second = a.run('heavy', 'y', async () => 'second ran');
    expect(a.lane('heavy')).to.deep.equal({ limit: 1, inFlight: 1, queued: 1 });
    open();
    await first;
    expect(await second).to.equal('second ran');
    expect(a.lane('heavy')).to.deep.equal({ limit: 1, inFlight: 0, queued: 0 });
  });

  it('a full lane without a queue sheds: 429 to the caller holding it, 503 to another', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { heavy: 1 }, queueMs: { heavy: 0 } });
    let open!: () => void;
    const held = a.run('heavy', 'x', () => new Promise<void>((r) => (open = r)));
    const own = await a.run('heavy', 'x', async () => undefined).catch((e: unknown) => e);
    const other = await a.run('heavy', 'y', async () => undefined).catch((e: unknown) => e);
    expect(own).to.be.instanceOf(TooManyRequestsError);
    expect(other).to.be.instanceOf(ServiceUnavailableError);
    expect((other as ServiceUnavailableError).headers['Retry-After']).to.equal('1');
    // Other lanes are not affected.
    expect(await a.run('agent', 'x', async () => 'agent ran')).to.equal('agent ran');
    open();
    await held;
  });

  it('a lane shrunk by latency or store failures sheds 503 to every caller: the condition is the service\'s', async () => {
    const { a, call } = harness({ queueMs: { heavy: 0 } });
    for (let i = 0; i < 50; i++) await call('heavy', 10);
    for (let i = 0; i < 50; i++) await call('heavy', 100);
    expect(a.lane('heavy').limit).to.equal(1);
    let open!: () => void;
    const held = a.run('heavy', 'x', () => new Promise<void>((r) => (open = r)));
    const own = await a.run('heavy', 'x', async () => undefined).catch((e: unknown) => e);
    expect(own).to.be.instanceOf(ServiceUnavailableError);
    open();
    await held;
  });
});
