/**
 * The agents held on this instance: per endpoint its channels (newest last), and the long
 * polls' deadlines in a wheel of one-second slots that the channel's one shared tick turns
 * (src/resources/agent-channel/service.ts). Nothing here keeps a timer per connection.
 */
import type { AgentChannelState, HeldChannel } from './model.js';

/** Endpoints whose last delivery this instance remembers (forgotten oldest first beyond). */
const MAX_REMEMBERED_DELIVERIES = 100_000;

export class ChannelRegistry {
  private readonly byEndpoint = new Map<string, HeldChannel[]>();
  /** Deadline second (epoch s) → the long polls that end then. */
  private readonly wheel = new Map<number, Set<HeldChannel>>();
  private readonly deadlineOf = new Map<HeldChannel, number>();
  private readonly lastDelivery = new Map<string, { latencyMs: number; at: number }>();
  private count = 0;

  /** Held channels on this instance. */
  get size(): number {
    return this.count;
  }

  /** Endpoints holding at least one channel here. */
  endpoints(): IterableIterator<string> {
    return this.byEndpoint.keys();
  }

  /** Holds a channel; a long poll with the time (epoch ms) its wait ends. */
  add(ch: HeldChannel, deadlineMs?: number): void {
    const list = this.byEndpoint.get(ch.endpointId);
    if (list) list.push(ch);
    else this.byEndpoint.set(ch.endpointId, [ch]);
    this.count += 1;
    if (deadlineMs !== undefined) {
      const slot = Math.ceil(deadlineMs / 1000);
      let set = this.wheel.get(slot);
      if (!set) this.wheel.set(slot, (set = new Set()));
      set.add(ch);
      this.deadlineOf.set(ch, slot);
    }
  }

  /** Lets a channel go; true when its endpoint now holds none here. Harmless for one already gone. */
  remove(ch: HeldChannel): boolean {
    const list = this.byEndpoint.get(ch.endpointId);
    const i = list ? list.indexOf(ch) : -1;
    if (!list || i < 0) return false;
    list.splice(i, 1);
    this.count -= 1;
    const slot = this.deadlineOf.get(ch);
    if (slot !== undefined) {
      this.deadlineOf.delete(ch);
      const set = this.wheel.get(slot);
      set?.delete(ch);
      if (set?.size === 0) this.wheel.delete(slot);
    }
    if (list.length > 0) return false;
    this.byEndpoint.delete(ch.endpointId);
    return true;
  }

  /** The endpoint's channels here, oldest first. */
  channels(endpointId: string): readonly HeldChannel[] {
    return this.byEndpoint.get(endpointId) ?? [];
  }

  /** Every held channel (the heartbeat, shutdown). */
  *all(): IterableIterator<HeldChannel> {
    for (const list of this.byEndpoint.values()) yield* list;
  }

  /** The long polls whose wait ended by `nowMs`, taken off the wheel (and the registry). */
  due(nowMs: number): HeldChannel[] {
    const out: HeldChannel[] = [];
    const now = Math.floor(nowMs / 1000);
    for (const [slot, set] of this.wheel) {
      if (slot > now) continue;
      for (const ch of set) out.push(ch);
    }
    for (const ch of out) this.remove(ch);
    return out;
  }

  /** Remembers a delivery's latency (command created → written) for the console. */
  delivered(endpointId: string, latencyMs: number, at: number): void {
    if (!this.lastDelivery.has(endpointId) && this.lastDelivery.size >= MAX_REMEMBERED_DELIVERIES) {
      const oldest = this.lastDelivery.keys().next().value;
      if (oldest !== undefined) this.lastDelivery.delete(oldest);
    }
    this.lastDelivery.delete(endpointId);
    this.lastDelivery.set(endpointId, { latencyMs, at });
  }

  /** The endpoint's channel as this instance holds it. */
  state(endpointId: string): AgentChannelState {
    const list = this.channels(endpointId);
    const newest = list[list.length - 1];
    const last = this.lastDelivery.get(endpointId);
    return {
      endpointId,
      held: list.length,
      ...(newest ? { kind: newest.kind, since: new Date(newest.since).toISOString() } : {}),
      ...(last ? { lastDeliveryLatencyMs: last.latencyMs, lastDeliveryAt: new Date(last.at).toISOString() } : {}),
    };
  }
}
