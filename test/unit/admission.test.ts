/**
 * The admission lanes (src/http/admission.ts), driven by a test clock: handler times are what
 * the test says they are, so the rules are checked without timing anything.
 */
import { expect } from 'chai';
import { Admission, DEFAULT_LANES, type Lane } from '../../src/http/admission.js';
import { ServiceUnavailableError, TooManyRequestsError } from '../../src/errors.js';

function harness(opts: Partial<ConstructorParameters<typeof Admission>[0]> = {}): {
  a: Admission;
  clock: { t: number };
  call(lane: Lane, ms: number, caller?: string): Promise<void>;
} {
  const clock = { t: 0 };
  const a = new Admission({ enabled: true, now: () => clock.t, ...opts });
  return {
    a,
    clock,
    call: (lane, ms, caller = 'caller') =>
      a.run(lane, caller, async () => {
        clock.t += ms;
      }),
  };
}

/** A request held in `lane` until `open()`. */
function held(a: Admission, lane: Lane, caller: string): { done: Promise<unknown>; open(): void } {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const done = a.run(lane, caller, () => gate).catch((e: unknown) => e);
  return { done, open: () => open() };
}

/** Lets queued promise continuations run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('admission lanes: agents first', () => {
  it('the agent lane has no adaptive limit: slow agents do not shrink it, and hundreds run at once', async () => {
    const { a, call } = harness();
    for (let i = 0; i < 300; i++) await call('agent', i < 150 ? 5 : 200);
    expect(a.lane('agent').limit).to.equal(DEFAULT_LANES.agent.max);
    const many = Array.from({ length: 500 }, (_, i) => held(a, 'agent', `agent-${i}`));
    expect(a.lane('agent')).to.deep.equal({ limit: DEFAULT_LANES.agent.max, inFlight: 500, queued: 0 });
    for (const h of many) h.open();
    await Promise.all(many.map((h) => h.done));
  });

  it("the lower lanes shrink while agents' latency is above its baseline — heavy most, admin least — and grow back when it recovers", async () => {
    const { a, call } = harness();
    for (let i = 0; i < 200; i++) await call('agent', 5);
    for (const lane of ['admin', 'interactive', 'heavy'] as const) expect(a.lane(lane).limit).to.equal(DEFAULT_LANES[lane].max);
    for (let i = 0; i < 40; i++) await call('agent', 40);
    const share = (lane: Lane): number => a.lane(lane).limit / DEFAULT_LANES[lane].max;
    expect(share('interactive')).to.be.below(1);
    expect(share('admin')).to.be.below(1);
    expect(share('admin')).to.be.above(share('interactive'));
    expect(share('interactive')).to.be.above(share('heavy'));
    for (let i = 0; i < 100; i++) await call('agent', 40);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.min);
    // Agents are never limited.
    expect(a.lane('agent').limit).to.equal(DEFAULT_LANES.agent.max);
    for (let i = 0; i < 1000; i++) await call('agent', 5);
    for (const lane of ['admin', 'interactive', 'heavy'] as const) expect(a.lane(lane).limit).to.equal(DEFAULT_LANES[lane].max);
  });

  it('a few slow agent requests in a quiet second shrink nothing: congestion needs a full window', async () => {
    const { a, call, clock } = harness();
    for (let i = 0; i < 200; i++) await call('agent', 5);
    // A long quiet window closes the last busy one.
    clock.t += 2000;
    await call('agent', 5);
    for (let i = 0; i < 5; i++) {
      clock.t += 2000;
      await call('agent', 200);
    }
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.max);
  });

  it('lanes shrunk for the agents are back at their ceilings after three long windows without agents', async () => {
    const { a, call, clock } = harness();
    for (let i = 0; i < 200; i++) await call('agent', 5);
    for (let i = 0; i < 100; i++) await call('agent', 40);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.min);
    // Heavy requests 1.5 s apart: the agents' last window closes, then long ones pass with none of them.
    const quiet = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        clock.t += 1500;
        await call('heavy', 1);
      }
    };
    await quiet(4);
    // Windows without agents, but fewer than three in a row: a lull, not their absence; the lanes only grow.
    expect(a.lane('heavy').limit).to.be.below(DEFAULT_LANES.heavy.max);
    await quiet(4);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.max);
    expect(a.lane('interactive').limit).to.equal(DEFAULT_LANES.interactive.max);
  });

  it('heavy work slowing down by itself shrinks nothing: only the agents steer', async () => {
    const { a, call } = harness();
    for (let i = 0; i < 100; i++) await call('agent', 5);
    for (let i = 0; i < 100; i++) await call('heavy', i < 50 ? 10 : 500);
    for (let i = 0; i < 100; i++) await call('agent', 5);
    expect(a.lane('heavy').limit).to.equal(DEFAULT_LANES.heavy.max);
  });

  it("a full lane queues, and a freed slot goes to the waiting caller that runs the fewest (one token cannot take the lane)", async () => {
    const a = new Admission({ enabled: true, fixedLimits: { heavy: 2 }, queueMs: { heavy: 60_000 } });
    const x1 = held(a, 'heavy', 'x');
    const x2 = held(a, 'heavy', 'x');
    const order: string[] = [];
    const x3 = a.run('heavy', 'x', async () => void order.push('x3'));
    const y1 = a.run('heavy', 'y', async () => void order.push('y1'));
    expect(a.lane('heavy')).to.deep.equal({ limit: 2, inFlight: 2, queued: 2 });
    x1.open();
    await x1.done;
    await y1;
    // y queued after x3 but ran first: x still ran one, y none.
    expect(order[0]).to.equal('y1');
    x2.open();
    await Promise.all([x2.done, x3]);
    expect(order).to.deep.equal(['y1', 'x3']);
    expect(a.lane('heavy')).to.deep.equal({ limit: 2, inFlight: 0, queued: 0 });
  });

  it('a full lane without a queue sheds: 429 to the caller holding its share, 503 to another; other lanes unaffected', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { heavy: 1 }, queueMs: { heavy: 0 } });
    const h = held(a, 'heavy', 'x');
    const own = await a.run('heavy', 'x', async () => undefined).catch((e: unknown) => e);
    const other = await a.run('heavy', 'y', async () => undefined).catch((e: unknown) => e);
    expect(own).to.be.instanceOf(TooManyRequestsError);
    expect(other).to.be.instanceOf(ServiceUnavailableError);
    expect((other as ServiceUnavailableError).headers['Retry-After']).to.equal('1');
    expect(await a.run('agent', 'x', async () => 'agent ran')).to.equal('agent ran');
    expect(await a.run('interactive', 'x', async () => 'read ran')).to.equal('read ran');
    h.open();
    await h.done;
  });

  it("a lane shrunk for the agents sheds 503 to every caller: the condition is the service's", async () => {
    const { a, call } = harness({ queueMs: { heavy: 0 } });
    for (let i = 0; i < 200; i++) await call('agent', 5);
    for (let i = 0; i < 100; i++) await call('agent', 40);
    expect(a.lane('heavy').limit).to.equal(1);
    const h = held(a, 'heavy', 'x');
    const own = await a.run('heavy', 'x', async () => undefined).catch((e: unknown) => e);
    expect(own).to.be.instanceOf(ServiceUnavailableError);
    h.open();
    await h.done;
  });

  it("one caller's burst beyond the queue is shed as its own excess (429); others still queue", async () => {
    const a = new Admission({ enabled: true, fixedLimits: { heavy: 1 }, queueMs: { heavy: 60_000 } });
    const h = held(a, 'heavy', 'x');
    const burst = Array.from({ length: 160 }, () => a.run('heavy', 'x', async () => 'ran').catch((e: unknown) => e));
    await settle();
    // Half the queue (128): the other half is left for callers to come.
    expect(a.lane('heavy').queued).to.equal(64);
    const other = a.run('heavy', 'y', async () => 'y ran');
    expect(a.lane('heavy').queued).to.equal(65);
    h.open();
    const answers = await Promise.all(burst);
    expect(answers.filter((x) => x === 'ran')).to.have.length(64);
    expect(answers.filter((x) => x instanceof TooManyRequestsError)).to.have.length(96);
    expect(await other).to.equal('y ran');
  });

  it('a standing queue keeps only fresh requests and serves the newest first; a burst is served oldest first', async () => {
    const clock = { t: 0 };
    // A standing queue's wait as long as a burst's, so that only the test clock decides.
    const a = new Admission({ enabled: true, now: () => clock.t, fixedLimits: { heavy: 1 }, queueMs: { heavy: 60_000 }, standingWaitMs: 50_000 });
    const h = held(a, 'heavy', 'x');
    const order: string[] = [];
    const old = a.run('heavy', 'a', async () => void order.push('old')).catch((e: unknown) => e);
    // The queue has not been empty for longer than a burst lasts: it is standing, and `old` waited too long.
    clock.t = 100_000;
    const b = a.run('heavy', 'b', async () => void order.push('b'));
    const c = a.run('heavy', 'c', async () => void order.push('c'));
    expect(await old).to.be.instanceOf(ServiceUnavailableError);
    h.open();
    await Promise.all([h.done, b, c]);
    expect(order).to.deep.equal(['c', 'b']);
    // Empty again: the next burst is FIFO.
    const h2 = held(a, 'heavy', 'x');
    const d = a.run('heavy', 'd', async () => void order.push('d'));
    const e = a.run('heavy', 'e', async () => void order.push('e'));
    h2.open();
    await Promise.all([h2.done, d, e]);
    expect(order).to.deep.equal(['c', 'b', 'd', 'e']);
  });

  it('the door sheds a lane only while its queue stands, never the agent or admin lanes', async () => {
    const clock = { t: 0 };
    const a = new Admission({ enabled: true, now: () => clock.t, fixedLimits: { heavy: 1, admin: 1 }, queueMs: { heavy: 60_000, admin: 60_000 }, standingWaitMs: 50_000 });
    expect(a.sheddingAtDoor()).to.equal(false);
    const h = held(a, 'heavy', 'x');
    const queued = a.run('heavy', 'y', async () => 'ran');
    // A burst: queued, but not standing yet.
    expect(a.sheddingAtDoor()).to.equal(false);
    expect(a.shedAtDoor('heavy')).to.equal(undefined);
    clock.t = 1_000;
    expect(a.sheddingAtDoor()).to.equal(true);
    const err = a.shedAtDoor('heavy');
    expect(err).to.be.instanceOf(ServiceUnavailableError);
    expect(err?.headers['Retry-After']).to.equal('1');
    expect(a.shedAtDoor('interactive'), 'a lane without a standing queue').to.equal(undefined);
    expect(a.shedAtDoor('agent')).to.equal(undefined);
    const ha = held(a, 'admin', 'x');
    const qa = a.run('admin', 'y', async () => 'ran');
    clock.t = 2_000;
    expect(a.shedAtDoor('admin'), 'administrative writes are never shed at the door').to.equal(undefined);
    h.open();
    ha.open();
    expect(await queued).to.equal('ran');
    expect(await qa).to.equal('ran');
    await Promise.all([h.done, ha.done]);
    expect(a.sheddingAtDoor(), 'drained: no longer standing').to.equal(false);
    const off = new Admission({ enabled: false });
    expect(off.sheddingAtDoor()).to.equal(false);
  });

  it('off: every request runs at once', async () => {
    const a = new Admission({ enabled: false, fixedLimits: { heavy: 1 } });
    const hs = Array.from({ length: 5 }, () => held(a, 'heavy', 'x'));
    for (const h of hs) h.open();
    await Promise.all(hs.map((h) => h.done));
  });
});
