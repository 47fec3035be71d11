/**
 * The agent channel (docs/adr/0113-agent-channel.md): agents hold a channel (long poll or
 * WebSocket) and their commands reach them at once. This instance's held agents, their wake
 * signals (commands created or moved to RETRY here, and through the change feed's `commands`
 * entries from every other instance), their presence, and one shared tick for everything
 * periodic: long-poll deadlines, WebSocket pings, bulk signs of life, grace after a drop.
 */
import type { Access } from '../../access/access.js';
import type { Logger } from '../../log.js';
import { Periodic } from '../../periodic.js';
import { ChannelDelivery, type MessageMover, type ReadySource } from './delivery.js';
import type { AgentChannelState, HeldChannel } from './model.js';
import { ChannelRegistry } from './registry.js';

export interface AgentChannelOptions {
  /** ECS_CHANNEL_WAIT_SECONDS: the longest long-poll wait. */
  waitSeconds: number;
  /** ECS_CHANNEL_PING_SECONDS. */
  pingSeconds: number;
  /** ECS_CHANNEL_GRACE_SECONDS. */
  graceSeconds: number;
  now?: () => number;
}

/** The endpoints' presence (src/resources/endpoints/presence.ts). */
export interface ChannelPresence {
  seenBeside(endpointId: string): Promise<void>;
  stampWindowMs(): number;
}

/** The endpoints' connection bookkeeping for a channel lost past its grace, and for its return. */
export interface ChannelConnections {
  channelLost(endpointId: string, access: Access): Promise<void>;
  channelBack(endpointId: string, access: Access): Promise<void>;
}

/** Where a wake is announced to the other instances (the change feed). */
export interface WakeFeed {
  append(feed: 'commands', ids: string[]): Promise<void>;
}

/** The shared tick. */
const TICK_MS = 1000;
/**
 * A held agent is stamped once every this many presence stamp windows (a window is at most a
 * tenth of the shortest presence timeout, so this is at most half of it): a held channel is its
 * own sign of life here, and the stamp only keeps lastSeen within the timeout for the other
 * instances and the searches. Every stamp rewrites an endpoint document (docs/adr/0129).
 */
const HELD_STAMP_WINDOWS = 5;
/** A default long poll waits between this share of ECS_CHANNEL_WAIT_SECONDS and all of it. */
const WAIT_JITTER = 0.1;

export class AgentChannelService {
  readonly registry = new ChannelRegistry();
  private readonly delivery: ChannelDelivery;
  private readonly ticker: Periodic;
  private readonly now: () => number;
  /** Endpoints whose last WebSocket here dropped: since when, and the agent's access. */
  private readonly lost = new Map<string, { at: number; access: Access }>();
  /** Endpoints this instance marked POTENTIALLY_DISCONNECTED after their grace. */
  private readonly marked = new Set<string>();
  private lastPing = 0;
  private lastStamp = 0;
  /** The held endpoints still to stamp in this stamp window, and how many each tick takes. */
  private stampQueue: string[] = [];
  private stampPerTick = 0;
  private stopped = false;

  constructor(
    ready: ReadySource,
    mover: MessageMover,
    private readonly presence: ChannelPresence,
    private readonly connections: ChannelConnections,
    private readonly feed: WakeFeed,
    private readonly opts: AgentChannelOptions,
    private readonly log: Logger,
  ) {
    this.now = opts.now ?? Date.now;
    this.delivery = new ChannelDelivery(this.registry, ready, mover, log, this.now);
    this.ticker = new Periodic('agent channel tick', TICK_MS, () => this.tick(), log);
  }

  /** A message became ready for an endpoint through this instance: its agent is woken here and on every other instance. */
  commandReady(endpointId: string): void {
    this.delivery.wake([endpointId]);
    // Not awaited: the feed's outbox sends it again until stored, and the create's answer does not wait for a wake.
    this.feed.append('commands', [endpointId]).catch(() => undefined);
  }

  /** The change feed's `commands` entries: endpoints with new ready messages (undefined: unknown, wake every agent held here). */
  onFeed(ids: string[] | undefined): void {
    this.delivery.wake(ids ?? [...this.registry.endpoints()]);
  }

  /** The wait of a long poll: `requested` seconds clamped to ECS_CHANNEL_WAIT_SECONDS, or that less some jitter (ms). */
  waitMs(requested: number | undefined): number {
    const max = this.opts.waitSeconds * 1000;
    if (requested !== undefined) return Math.min(requested * 1000, max);
    return Math.round(max * (1 - WAIT_JITTER * Math.random()));
  }

  /**
   * Takes up a channel: held (a long poll until `deadlineMs`), a sign of life, and whatever is
   * ready delivered at once. Resolves once that first delivery pass ended.
   */
  async open(ch: HeldChannel, deadlineMs?: number): Promise<void> {
    if (this.stopped) {
      ch.end('shutdown');
      return;
    }
    this.registry.add(ch, deadlineMs);
    this.lost.delete(ch.endpointId);
    if (this.marked.delete(ch.endpointId)) {
      this.connections.channelBack(ch.endpointId, ch.access).catch((err: unknown) => this.bookkeepingFailed(err, ch.endpointId));
    }
    void this.presence.seenBeside(ch.endpointId);
    await this.delivery.checkIn(ch.endpointId);
  }

  /** The transport lost a channel: `dropped` for a WebSocket that closed without the service ending it. */
  close(ch: HeldChannel, dropped: boolean): void {
    const none = this.registry.remove(ch);
    if (none && dropped && !this.stopped) this.lost.set(ch.endpointId, { at: this.now(), access: ch.access });
  }

  /** The endpoint's channel as this instance holds it (the console's endpoint page). */
  state(endpointId: string): AgentChannelState {
    return this.registry.state(endpointId);
  }

  /** Starts the shared tick. */
  start(): void {
    this.stopped = false;
    this.ticker.start(TICK_MS);
  }

  /** Stops the tick and ends every held channel (the agents come back to another instance). */
  stop(): void {
    this.stopped = true;
    this.ticker.stop();
    const all = [...this.registry.all()];
    for (const ch of all) {
      this.registry.remove(ch);
      ch.end('shutdown');
    }
  }

  /** The one periodic pass over everything held here. */
  private async tick(): Promise<void> {
    const now = this.now();
    for (const ch of this.registry.due(now)) ch.end('expired');
    // Pinged every half interval: a socket that missed a ping is closed within ECS_CHANNEL_PING_SECONDS of its last answer.
    if (now - this.lastPing >= this.opts.pingSeconds * 500) {
      this.lastPing = now;
      for (const ch of this.registry.all()) ch.heartbeat?.();
    }
    // A held channel is a sign of life: every held agent once per stamp window, spread over the
    // window's ticks, each tick's share one bulk of the endpoints' group commit.
    const windowMs = this.presence.stampWindowMs() * HELD_STAMP_WINDOWS;
    if (this.stampQueue.length === 0 && now - this.lastStamp >= windowMs) {
      this.lastStamp = now;
      this.stampQueue = [...this.registry.endpoints()];
      this.stampPerTick = Math.ceil(this.stampQueue.length / Math.max(1, Math.floor(windowMs / TICK_MS) - 1));
    }
    for (const id of this.stampQueue.splice(0, this.stampPerTick)) {
      if (this.registry.channels(id).length === 0) continue;
      void this.presence.seenBeside(id);
    }
    const graceMs = this.opts.graceSeconds * 1000;
    const gone: [string, Access][] = [];
    for (const [id, l] of this.lost) {
      if (now - l.at < graceMs) continue;
      this.lost.delete(id);
      if (this.registry.channels(id).length === 0) gone.push([id, l.access]);
    }
    await Promise.all(
      gone.map(async ([id, access]) => {
        try {
          this.marked.add(id);
          await this.connections.channelLost(id, access);
          // A channel taken up while the write was in flight: its return may have landed first, so it is written again after.
          if (this.registry.channels(id).length > 0) {
            this.marked.delete(id);
            await this.connections.channelBack(id, access);
          }
        } catch (err) {
          this.bookkeepingFailed(err, id);
        }
      }),
    );
    this.delivery.retryFailed();
  }

  private bookkeepingFailed(err: unknown, endpointId: string): void {
    this.log.debug({ err: { message: (err as Error).message }, endpointId }, 'agent channel bookkeeping write failed');
  }
}
