/** Command-message status moves as the service defines them (docs/adr/0040-command-message-pipeline.md), written out independently of src/resources/commands/status.ts. */
import type { CommandMessageStatus } from '../../src/resources/commands/model.js';

export const COMMAND_MESSAGE_MOVES: Record<CommandMessageStatus, CommandMessageStatus[]> = {
  CREATED: ['SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'],
  RETRY: ['SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'],
  SENT: [],
  MSG_SEND_FAIL: [],
  MSG_HYDRATE_FAIL: [],
  MSG_WSS_FAIL: [],
};
