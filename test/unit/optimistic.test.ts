import { expect } from 'chai';
import { ConflictError, ServiceUnavailableError, WriteConflictError } from '../../src/errors.js';
import { conflictBackoffMs, OPTIMISTIC_ATTEMPTS, readModifyWrite } from '../../src/store/optimistic.js';

/** A shared record written by racing read-modify-write clients, as the store does it. */
class Record {
  value = 0;
  seq = 0;
  read(): { value: number; seq: number } {
    return { value: this.value, seq: this.seq };
  }
  async write(value: number, ifSeq: number): Promise<void> {
    await new Promise((r) => setImmediate(r));
    if (ifSeq !== this.seq) throw new WriteConflictError('changed since the read');
    this.value = value;
    this.seq += 1;
  }
}

describe('optimistic read-modify-write', () => {
  it('reads again after a lost write and ends with every increment applied', async () => {
    const rec = new Record();
    let attempts = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        readModifyWrite(async () => {
          attempts++;
          const cur = rec.read();
          await rec.write(cur.value + 1, cur.seq);
        }),
      ),
    );
    expect(rec.value).to.equal(8);
    expect(attempts).to.be.greaterThan(8);
  });

  it('ends at once on a 409 the attempt decided itself, and on any other error', async () => {
    for (const err of [new ConflictError('refused state move'), new Error('boom')]) {
      let calls = 0;
      const res = await readModifyWrite(async () => {
        calls++;
        throw err;
      }).catch((e: unknown) => e);
      expect(res).to.equal(err);
      expect(calls).to.equal(1);
    }
  });

  it('answers 503 with Retry-After once the contention outlasts every attempt', async () => {
    let calls = 0;
    const res = await readModifyWrite(async () => {
      calls++;
      throw new WriteConflictError('changed since the read');
    }, 4).catch((e: unknown) => e);
    expect(calls).to.equal(4);
    expect(res).to.be.instanceOf(ServiceUnavailableError);
    expect((res as ServiceUnavailableError).status).to.equal(503);
    expect((res as ServiceUnavailableError).headers).to.have.property('Retry-After');
    expect((res as ServiceUnavailableError).exception).to.equal('ServiceUnavailableError');
    expect(OPTIMISTIC_ATTEMPTS).to.be.at.least(8);
    expect(new WriteConflictError('x').exception).to.equal('ConflictError');
  });

  it('pauses a random time below min(2^n, 100) ms', () => {
    expect(conflictBackoffMs(1, () => 0.999)).to.be.below(2);
    expect(conflictBackoffMs(3, () => 0.5)).to.equal(4);
    expect(conflictBackoffMs(12, () => 0.999)).to.be.below(100);
    expect(conflictBackoffMs(5, () => 0)).to.equal(0);
  });
});
