/** Spec 2.6: command messages to endpoints and their delivery records. */
import type { UserKey } from '../../domain.js';
import type { SeqNoPrimaryTerm } from '../../store/versions.js';

export const COMMAND_MESSAGE_STATUSES = ['CREATED', 'SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'] as const;
export type CommandMessageStatus = (typeof COMMAND_MESSAGE_STATUSES)[number];

export const DELIVERY_STATUSES = ['NOT_DELIVERED', 'DELIVERED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The base message fields the socket gateway sends to the agent. */
export interface BaseMessage {
  module: string;
  name: string;
  uuid: string;
  /** The uuid of the message this one replies to (absent on operator-created messages). */
  ruuid?: string;
  ts: string;
  payload: Record<string, unknown>;
}

/** The stored command message document. */
export interface CommandMessageDoc extends BaseMessage {
  id: string;
  status: CommandMessageStatus;
  endpointId: string;
  orgId: string;
  createdBy: UserKey;
  updatedBy: UserKey;
  createdAt: string;
  updatedAt: string;
}

/** EndpointCommandMessage as the API shows it. */
export interface EndpointCommandMessage extends CommandMessageDoc {
  version: SeqNoPrimaryTerm;
}

/** The stored delivery document (id = the message uuid). */
export interface DeliveryDoc {
  uuid: string;
  endpointId: string;
  orgId: string;
  status: DeliveryStatus;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** EndpointCommandMessageDelivery as the API shows it (integer version). */
export interface EndpointCommandMessageDelivery extends DeliveryDoc {
  version: number;
}

/** What a service asks the pipeline to send: one message for one endpoint. */
export interface NewMessage {
  module: string;
  name: string;
  payload?: Record<string, unknown>;
}
