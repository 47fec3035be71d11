import { expect } from 'chai';
import { COMMAND_MESSAGE_MOVES } from '../helpers/command-status.js';
import { COMMAND_MESSAGE_STATUSES } from '../../src/resources/commands/model.js';
import { canMoveCommandMessage, isFinalCommandMessageStatus } from '../../src/resources/commands/status.js';


describe('command message status machine', () => {
  for (const from of COMMAND_MESSAGE_STATUSES) {
    for (const to of COMMAND_MESSAGE_STATUSES) {
      const allowed = COMMAND_MESSAGE_MOVES[from].includes(to);
      it(`${from} → ${to} is ${allowed ? 'allowed' : 'refused'}`, () => {
        expect(canMoveCommandMessage(from, to)).to.equal(allowed);
      });
    }
  }

  it('SENT and the three failures are final; CREATED and RETRY are not', () => {
    const finals = COMMAND_MESSAGE_STATUSES.filter(isFinalCommandMessageStatus);
    expect(finals).to.have.members(['SENT', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL']);
  });

  it('nothing moves back to CREATED', () => {
    for (const from of COMMAND_MESSAGE_STATUSES) expect(canMoveCommandMessage(from, 'CREATED')).to.equal(false);
  });
});
