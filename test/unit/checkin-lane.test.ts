/**
 * The check-in lane of the agent channel (docs/adr/0113-agent-channel.md, 0127): a reconnect
 * storm beyond it is shed with 503 (or 429 for one token's own excess), never another 5xx, and
 * each shed check-in is booked a return at the pace the lane admits agents, so a storm comes
 * back spread over what the lane can take.
 */
import { expect } from 'chai';
import { Admission } from '../../src/http/admission.js';
import { AppError, ServiceUnavailableError } from '../../src/errors.js';
import { ASSUMED_PER_SECOND, MAX_RETURN_SECONDS, MIN_RETURN_SECONDS, ReturnSchedule } from '../../src/http/return-schedule.js';

const retryAfter = (e: unknown): number => Number((e as AppError).headers?.['Retry-After']);

describe('the check-in lane', () => {
  it('sheds check-ins beyond its limit with 503 and books each a return, the later ones later', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { checkin: 1 }, queueMs: { checkin: 0 } });
    let open!: () => void;
    const first = a.run('checkin', 'agent-0', () => new Promise<void>((r) => (open = r)));
    const n = 3 * ASSUMED_PER_SECOND;
    const shed = await Promise.all(
      Array.from({ length: n }, (_, i) => a.run('checkin', `agent-${i + 1}`, async () => undefined).then(() => undefined, (e: unknown) => e)),
    );
    open();
    await first;
    expect(shed.every((e) => e instanceof ServiceUnavailableError)).to.equal(true);
    const advised = shed.map(retryAfter);
    expect(Math.min(...advised)).to.equal(MIN_RETURN_SECONDS);
    // Nothing measured yet: booked at the assumed pace, so 3,000 refused agents return over about 3 s, in order.
    expect(Math.max(...advised)).to.be.within(3, 4);
    expect(advised).to.deep.equal([...advised].sort((x, y) => x - y));
  });

  it('other lanes keep their fixed Retry-After of a second', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { admin: 1 }, queueMs: { admin: 0 } });
    let open!: () => void;
    const first = a.run('admin', 'one', () => new Promise<void>((r) => (open = r)));
    const shed = await Promise.all(Array.from({ length: 50 }, (_, i) => a.run('admin', `other-${i}`, async () => undefined).then(() => undefined, (e: unknown) => e)));
    open();
    await first;
    expect(shed.map(retryAfter).every((s) => s === 1)).to.equal(true);
  });
});

describe('the return schedule of shed check-ins', () => {
  it('books returns at the pace a full lane admitted, not at the pace of an idle one', () => {
    const s = new ReturnSchedule();
    const t0 = 1_000_000;
    // An idle lane: 5 check-ins a second, nobody waiting. Not a measure of what it can take.
    for (let i = 0; i < 20; i++) s.admitted(t0 + i * 200, false);
    expect(s.pace(t0 + 4000)).to.equal(ASSUMED_PER_SECOND);
    // A full lane admitting 200 a second for 2 s.
    for (let i = 0; i < 400; i++) s.admitted(t0 + 4000 + i * 5, true);
    const now = t0 + 6000;
    expect(s.pace(now)).to.be.within(180, 220);
    // 1,000 agents refused at once come back over about 5 s (1,000 ÷ 200), each second taking about 200.
    const booked = Array.from({ length: 1000 }, () => s.book(now));
    expect(booked[0]).to.equal(MIN_RETURN_SECONDS);
    expect(booked[booked.length - 1]).to.be.within(5, 7);
    const perSecond = new Map<number, number>();
    for (const b of booked) perSecond.set(b, (perSecond.get(b) ?? 0) + 1);
    for (const [sec, count] of perSecond) if (sec > 1 && sec < booked[booked.length - 1]) expect(count, `second ${sec}`).to.be.within(150, 250);
  });

  it('never books further than the longest return, and starts again from now once the bookings passed', () => {
    const s = new ReturnSchedule();
    const now = 5_000_000;
    for (let i = 0; i < 10; i++) s.admitted(now - 400 + i * 40, true);
    const booked = Array.from({ length: 5000 }, () => s.book(now));
    expect(Math.max(...booked)).to.equal(MAX_RETURN_SECONDS);
    // Long after: the next refusal returns at once (the soonest), not behind the old bookings.
    expect(s.book(now + (MAX_RETURN_SECONDS + 10) * 1000)).to.equal(MIN_RETURN_SECONDS);
  });
});
