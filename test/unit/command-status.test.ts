import { expect } from 'chai';
import { COMMAND_MESSAGE_STATUSES, type CommandMessageStatus } from '../../src/resources/commands/model.js';
import { canMoveCommandMessage, isFinalCommandMessageStatus } from '../../src/resources/commands/status.js';

/** The table of issue 5, written out independently of status.ts. */
const EXPECTED: Record<CommandMessageStatus, CommandMessageStatus[]> = {
  CREATED: ['SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'],
  RETRY: ['SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'],
  SENT: [],
  MSG_SEND_FAIL: [],
  MSG_HYDRATE_FAIL: [],
  MSG_WSS_FAIL: [],
};

describe('command message status machine', () => {
  for (const from of COMMAND_MESSAGE_STATUSES) {
    for (const to of COMMAND_MESSAGE_STATUSES) {
      const allowed = EXPECTED[from].includes(to);
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
