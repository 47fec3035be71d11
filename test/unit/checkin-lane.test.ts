/**
 * The check-in lane of the agent channel (docs/adr/0113-agent-channel.md): a reconnect storm
 * beyond it is shed with 503 (or 429 for one token's own excess), never another 5xx, and each
 * shed check-in is told a Retry-After drawn from 1–10 s so the agents come back spread out.
 */
import { expect } from 'chai';
import { Admission } from '../../src/http/admission.js';
import { AppError, ServiceUnavailableError } from '../../src/errors.js';
import { CHECKIN_RETRY_AFTER_SECONDS, shedRetryAfterSeconds } from '../../src/lanes.js';

describe('the check-in lane', () => {
  it('sheds check-ins beyond its limit with 503 and a Retry-After spread over 1–10 s', async () => {
    const a = new Admission({ enabled: true, fixedLimits: { checkin: 1 }, queueMs: { checkin: 0 } });
    let open!: () => void;
    const first = a.run('checkin', 'agent-0', () => new Promise<void>((r) => (open = r)));
    const shed = await Promise.all(
      Array.from({ length: 200 }, (_, i) => a.run('checkin', `agent-${i + 1}`, async () => undefined).then(() => undefined, (e: unknown) => e)),
    );
    open();
    await first;
    expect(shed.every((e) => e instanceof ServiceUnavailableError)).to.equal(true);
    const advised = shed.map((e) => Number((e as AppError).headers?.['Retry-After']));
    expect(Math.min(...advised)).to.be.at.least(CHECKIN_RETRY_AFTER_SECONDS.min);
    expect(Math.max(...advised)).to.be.at.most(CHECKIN_RETRY_AFTER_SECONDS.max);
    // Spread: 200 draws over ten values take more than a few of them.
    expect(new Set(advised).size).to.be.greaterThan(5);
  });

  it('other lanes keep their fixed Retry-After', () => {
    for (const lane of ['agent', 'admin', 'interactive', 'heavy'] as const) expect(shedRetryAfterSeconds(lane, 1)).to.equal(1);
  });
});
