/**
 * The agent channel's domain types (docs/adr/0113-agent-channel.md): a channel an agent holds
 * open so that its commands reach it at once, whatever carries it (a long poll or a WebSocket;
 * the transports live in src/http/agent-channel and in this resource's routes).
 */
import type { Access } from '../../access/access.js';
import type { EndpointCommandMessage } from '../commands/model.js';

export const CHANNEL_KINDS = ['LONG_POLL', 'WEBSOCKET'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** One held channel of one agent, as the transport offers it to the domain. */
export interface HeldChannel {
  readonly endpointId: string;
  readonly kind: ChannelKind;
  /** When the agent took it up (epoch ms). */
  readonly since: number;
  /** The agent's own access (its token): every move of its messages is made as the agent. */
  readonly access: Access;
  /** True while a message handed now would be written (open, answer not yet given, send buffer not stalled). */
  writable(): boolean;
  /**
   * Writes claimed messages (already SENT): a long poll answers them, a WebSocket writes one
   * frame each. Resolves with the messages that could not be written (none: all written).
   */
  deliver(messages: EndpointCommandMessage[]): Promise<EndpointCommandMessage[]>;
  /** The shared heartbeat tick (a WebSocket pings; a socket that missed the last ping is closed). */
  heartbeat?(): void;
  /** Ends the channel: `expired` answers a long poll with [], `shutdown` tells the agent to come back elsewhere. */
  end(why: 'expired' | 'shutdown'): void;
}

/** What the console shows of an endpoint's channel on the instance that holds it. */
export interface AgentChannelState {
  endpointId: string;
  /** The newest held channel's kind; absent when none is held. */
  kind?: ChannelKind;
  /** When the newest held channel was taken up. */
  since?: string;
  /** Channels the agent holds (two during a reconnect). */
  held: number;
  /** The last delivery through a channel: command created → written to the agent, in ms. */
  lastDeliveryLatencyMs?: number;
  lastDeliveryAt?: string;
}
