/**
 * The command message status machine (the spec gives none; docs/adr/0040-command-message-pipeline.md):
 * CREATED and RETRY may move to SENT, RETRY or any failure; SENT and the failures are final.
 */
import { COMMAND_MESSAGE_STATUSES, type CommandMessageStatus } from './model.js';

const FAILURES: readonly CommandMessageStatus[] = ['MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'];
const ONWARD: readonly CommandMessageStatus[] = ['SENT', 'RETRY', ...FAILURES];

/** Allowed targets per source status. */
export const COMMAND_MESSAGE_TRANSITIONS: Readonly<Record<CommandMessageStatus, readonly CommandMessageStatus[]>> = {
  CREATED: ONWARD,
  RETRY: ONWARD,
  SENT: [],
  MSG_SEND_FAIL: [],
  MSG_HYDRATE_FAIL: [],
  MSG_WSS_FAIL: [],
};

/** True when a message in `from` may move to `to`. */
export function canMoveCommandMessage(from: CommandMessageStatus, to: CommandMessageStatus): boolean {
  return COMMAND_MESSAGE_TRANSITIONS[from].includes(to);
}

/** True for statuses no move leaves. */
export function isFinalCommandMessageStatus(s: CommandMessageStatus): boolean {
  return COMMAND_MESSAGE_TRANSITIONS[s].length === 0;
}

export { COMMAND_MESSAGE_STATUSES };
