import { expect } from 'chai';
import fc from 'fast-check';
import Joi from 'joi';
import { fastAcceptorOf, validatePart } from '../../src/http/routes.js';
import { installedSoftwareList } from '../../src/resources/software-inventory/schema.js';

/** What joi alone answers for a body: the converted value, or the 400's message. */
function viaJoi(value: unknown): { value?: unknown; error?: string } {
  const plain = Joi.array().concat(installedSoftwareList); // a copy: the same rules, no fast acceptor
  expect(fastAcceptorOf(plain)).to.equal(undefined);
  try {
    return { value: validatePart(plain, value, 'body') };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const text = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('', ' ', ' lead', 'trail ', 'tab\there', 'nl\n', 'del\u007f', 'ünï €', 'a'.repeat(33), 'x'.repeat(129), 'y'.repeat(257)),
);
const optional = fc.oneof(fc.constant(undefined), fc.constant(null), text, fc.integer());
const date = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', null, '2024-02-29', '2024-02-30', '2023-13-01', '2024-01-02T03:04:05Z', '2024-01-02T03:04:05.678Z', '2024-01-02T03:04:05.6789Z'),
  fc.constantFrom('2024-01-02T03:04:05+02:00', '2024-01-02T03:04', '20240102', 'yesterday', ' 2024-01-02', 12345),
  fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
);
const item = fc.oneof(
  fc.record(
    { name: text, version: text, vendor: optional, installDate: date, architecture: optional, extra: fc.constant('x') },
    { requiredKeys: ['name', 'version'] },
  ),
  fc.constantFrom(null, 'item', 7, [] as unknown[]),
);
/** Drops keys whose value is undefined, as a JSON body would. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

describe('fast acceptor of the inventory list body', () => {
  const fast = fastAcceptorOf(installedSoftwareList) as (v: unknown) => unknown;

  it('answers exactly what joi answers, whenever it answers, and never takes an unknown key (fuzzed bodies)', () => {
    let taken = 0;
    let unknownKeys = 0;
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }).map(asJson), (body) => {
        const out = fast(body);
        const hasUnknown = (body as unknown[]).some((i) => typeof i === 'object' && i !== null && 'extra' in i);
        if (hasUnknown) {
          unknownKeys++;
          expect(out, 'fast path took an unknown key').to.equal(undefined);
          expect(viaJoi(body).error).to.match(/body\.\d+\.extra is not allowed/);
        }
        if (out === undefined) return;
        taken++;
        const joi = viaJoi(body);
        expect(joi.error, JSON.stringify(body)).to.equal(undefined);
        expect(out).to.deep.equal(joi.value);
      }),
      { numRuns: 3000 },
    );
    expect(taken, 'bodies the fast path answered').to.be.greaterThan(100);
    expect(unknownKeys, 'bodies with an unknown key').to.be.greaterThan(100);
  });

  it('takes a typical 200-item report, with and without install dates, and leaves errors to joi', () => {
    const report = Array.from({ length: 200 }, (_, k) => ({ name: `package-${k}`, version: `1.${k}.0`, vendor: 'Vendor', architecture: 'x64' }));
    expect(fast(report)).to.deep.equal(report);
    const dated = report.map((r) => ({ ...r, installDate: '2025-06-01' }));
    expect(fast(dated)).to.deep.equal(viaJoi(dated).value);
    expect((fast(dated) as { installDate: Date }[])[0].installDate).to.be.instanceOf(Date);
    // An unknown key is never taken: joi refuses it, naming it (a typo is not silently dropped).
    const typo = [...report.slice(0, 3), { name: 'a', version: '1', vendr: 'Vendor' }];
    expect(fast(typo)).to.equal(undefined);
    expect(viaJoi(typo).error).to.equal('body.3.vendr is not allowed');
    for (const bad of [[...report, { version: '1' }], [{ name: ' padded', version: '1' }], [{ name: 'a', version: '1', vendor: '' }], {}, 'x']) {
      expect(fast(bad), JSON.stringify(bad).slice(0, 80)).to.equal(undefined);
    }
  });
});
