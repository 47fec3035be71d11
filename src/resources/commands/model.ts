/** Spec 2.6: command messages to endpoints and their delivery records. */
import type { UserKey } from '../../domain.js';
import type { SeqNoPrimaryTerm } from '../../store/versions.js';

export const COMMAND_MESSAGE_STATUSES = ['CREATED', 'SENT', 'RETRY', 'MSG_SEND_FAIL', 'MSG_HYDRATE_FAIL', 'MSG_WSS_FAIL'] as const;
export type CommandMessageStatus = (typeof COMMAND_MESSAGE_STATUSES)[number];
/** Extension status: a waiting message past its expiry reads so; it is never stored. */
export const EXPIRED = 'EXPIRED';
export const EFFECTIVE_COMMAND_MESSAGE_STATUSES = [...COMMAND_MESSAGE_STATUSES, EXPIRED] as const;
export type EffectiveCommandMessageStatus = (typeof EFFECTIVE_COMMAND_MESSAGE_STATUSES)[number];

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
  /** Extension: after it, a waiting message reads EXPIRED. */
  expiresAt?: string;
  /** Extension: moves into RETRY so far. */
  retries?: number;
  /** Extension: why the message failed (set with a failure status). */
  failureReason?: string;
  /** The ids of the moves that wrote this message, oldest first: how a caller's repeat is recognised (never shown). */
  moveIds?: string[];
}

/** EndpointCommandMessage as the API shows it (status as it reads now, EXPIRED included). */
export interface EndpointCommandMessage extends Omit<CommandMessageDoc, 'status' | 'moveIds'> {
  status: EffectiveCommandMessageStatus;
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
  /** Extension: this message's lifetime instead of ECS_COMMAND_TTL. */
  ttlSeconds?: number;
}
