import { expect } from 'chai';
import {
  canTransition,
  LICENSE_STATES,
  LICENSE_TRANSITIONS,
  transitionStamps,
  type LicenseState,
} from '../../src/resources/licenses/model.js';

/** The license state machine, written out pair by pair (5 × 5). */
const EXPECTED: Record<LicenseState, Record<LicenseState, boolean>> = {
  CREATED: { CREATED: false, ACTIVATED: true, REVOKED: false, DEACTIVATED: false, EXPIRED: false },
  ACTIVATED: { CREATED: false, ACTIVATED: false, REVOKED: true, DEACTIVATED: true, EXPIRED: true },
  REVOKED: { CREATED: false, ACTIVATED: false, REVOKED: false, DEACTIVATED: false, EXPIRED: false },
  DEACTIVATED: { CREATED: false, ACTIVATED: true, REVOKED: true, DEACTIVATED: false, EXPIRED: false },
  EXPIRED: { CREATED: false, ACTIVATED: false, REVOKED: false, DEACTIVATED: false, EXPIRED: false },
};

describe('LicenseInfo state machine', () => {
  for (const from of LICENSE_STATES) {
    for (const to of LICENSE_STATES) {
      it(`${from} → ${to} is ${EXPECTED[from][to] ? 'allowed' : 'refused'}`, () => {
        expect(canTransition(from, to)).to.equal(EXPECTED[from][to]);
      });
    }
  }

  it('covers every state, and REVOKED and EXPIRED are final', () => {
    expect(Object.keys(LICENSE_TRANSITIONS).sort()).to.deep.equal([...LICENSE_STATES].sort());
    expect(LICENSE_TRANSITIONS.REVOKED).to.deep.equal([]);
    expect(LICENSE_TRANSITIONS.EXPIRED).to.deep.equal([]);
  });

  it('each move stamps its own date; activation also stamps lastActiveDate', () => {
    const now = '2030-01-01T00:00:00.000Z';
    expect(transitionStamps('ACTIVATED', now)).to.deep.equal({ activationDate: now, lastActiveDate: now });
    expect(transitionStamps('DEACTIVATED', now)).to.deep.equal({ deactivationDate: now });
    expect(transitionStamps('REVOKED', now)).to.deep.equal({ revocationDate: now });
    expect(transitionStamps('EXPIRED', now)).to.deep.equal({ expirationDate: now });
    expect(transitionStamps('CREATED', now)).to.deep.equal({});
  });
});
