/**
 * Delivery through held channels (docs/adr/0113-agent-channel.md, 0114 for a frame that
 * cannot be written). Woken endpoints are gathered for one event-loop turn and their ready
 * messages read in one search per batch; nothing is read for an agent nobody woke. Each message
 * is claimed by the one conditional move of the command pipeline (CommandService.claim to
 * SENT) before it is written: only the channel whose move answered delivers, so a message
 * reaches exactly one channel even while an agent holds two (here or on another instance).
 */
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Access } from '../../access/access.js';
import type { Logger } from '../../log.js';
import type { CommandMessageStatus, EndpointCommandMessage } from '../commands/model.js';
import type { HeldChannel } from './model.js';
import type { ChannelRegistry } from './registry.js';

/** The command pipeline's moves as the channel claims them (CommandService.claim). */
export interface MessageMover {
  claim(id: string, requested: CommandMessageStatus, access: Access, reason?: string): Promise<EndpointCommandMessage>;
}

/** Ready messages of many endpoints in one read (ReadyMessages). */
export interface ReadySource {
  readyFor(endpointIds: readonly string[], perEndpoint: number): Promise<Map<string, EndpointCommandMessage[]>>;
}

/** Endpoints read in one search. */
const BATCH = 500;
/** Messages one endpoint gets per pass (more: another pass follows at once). */
const PER_ENDPOINT = 32;
/** Batches read at once. */
const PARALLEL_BATCHES = 4;

/** Why a WebSocket frame was not written, kept with the message's RETRY (docs/adr/0114). */
export const FRAME_NOT_WRITTEN = 'the agent channel could not write the frame (socket closing or stalled); retried on its next channel';

export class ChannelDelivery {
  /** Endpoints woken and not yet passed, with the check-ins waiting for their pass. */
  private readonly pending = new Map<string, (() => void)[]>();
  private readonly busy = new Set<string>();
  /** Endpoints whose pass met a store failure: woken again on the next tick. */
  private readonly failed = new Set<string>();
  private scheduled = false;
  private running = 0;
  private warned = false;

  constructor(
    private readonly registry: ChannelRegistry,
    private readonly ready: ReadySource,
    private readonly mover: MessageMover,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Wakes the endpoints held here (others are ignored): their ready messages are read and delivered. */
  wake(endpointIds: Iterable<string>): void {
    let any = false;
    for (const id of endpointIds) {
      if (this.registry.channels(id).length === 0 || this.pending.has(id)) continue;
      this.pending.set(id, []);
      any = true;
    }
    if (any) this.schedule();
  }

  /** Wakes one endpoint and resolves once its pass ended (a check-in answers what it delivered). */
  checkIn(endpointId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiters = this.pending.get(endpointId);
      if (waiters) waiters.push(resolve);
      else this.pending.set(endpointId, [resolve]);
      this.schedule();
    });
  }

  /** Wakes again the endpoints whose last pass failed (the shared tick). */
  retryFailed(): void {
    if (this.failed.size === 0) return;
    const ids = [...this.failed];
    this.failed.clear();
    this.wake(ids);
  }

  private schedule(): void {
    if (this.scheduled || this.running >= PARALLEL_BATCHES) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** One batch: the woken endpoints not in a pass already, read together, delivered each. */
  private async flush(): Promise<void> {
    const batch: { id: string; waiters: (() => void)[] }[] = [];
    for (const [id, waiters] of this.pending) {
      if (this.busy.has(id)) continue;
      this.pending.delete(id);
      this.busy.add(id);
      batch.push({ id, waiters });
      if (batch.length >= BATCH) break;
    }
    if (batch.length === 0) return;
    this.running += 1;
    if (this.pending.size > batch.length) this.schedule();
    try {
      const ids = batch.filter((b) => this.registry.channels(b.id).length > 0).map((b) => b.id);
      const ready = await this.ready.readyFor(ids, PER_ENDPOINT);
      this.recovered();
      await Promise.all(ids.map((id) => this.deliverTo(id, ready.get(id) ?? [])));
    } catch (err) {
      for (const b of batch) this.failed.add(b.id);
      this.failing(err);
    } finally {
      this.running -= 1;
      for (const b of batch) {
        this.busy.delete(b.id);
        for (const w of b.waiters) w();
      }
      if (this.pending.size > 0) this.schedule();
    }
  }

  /** The newest channel of the endpoint that can take a message now. */
  private pick(endpointId: string, except?: HeldChannel): HeldChannel | undefined {
    const list = this.registry.channels(endpointId);
    for (let i = list.length - 1; i >= 0; i--) if (list[i] !== except && list[i].writable()) return list[i];
    return undefined;
  }

  /**
   * Claims and writes one endpoint's ready messages. A WebSocket that cannot take a frame is
   * ended and the message moved to RETRY (docs/adr/0114), which wakes the endpoint again for
   * its other channel or its return. A message another channel claimed first (409) is skipped.
   */
  private async deliverTo(endpointId: string, messages: EndpointCommandMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const ch = this.pick(endpointId);
    if (!ch) {
      const stalled = this.registry.channels(endpointId).find((c) => c.kind === 'WEBSOCKET');
      if (!stalled) return;
      this.registry.remove(stalled);
      stalled.end('shutdown');
      await Promise.all(messages.map((m) => this.claim(m, 'RETRY', stalled.access, FRAME_NOT_WRITTEN)));
      return;
    }
    // Claimed together; what was claimed is written even when another claim met a store failure (then thrown after).
    const settled = await Promise.allSettled(messages.map((m) => this.claim(m, 'SENT', ch.access)));
    const claimed = settled.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    await this.write(endpointId, ch, claimed);
    if (failure) throw failure.reason;
  }

  /** Writes claimed messages to their channel, or to the agent's other channel here when it went meanwhile. */
  private async write(endpointId: string, ch: HeldChannel, claimed: EndpointCommandMessage[]): Promise<void> {
    if (claimed.length === 0) return;
    let unwritten = await ch.deliver(claimed);
    // Claimed but its channel went in between: the agent's other channel here takes them, if it holds one.
    const other = unwritten.length > 0 ? this.pick(endpointId, ch) : undefined;
    if (other) unwritten = await other.deliver(unwritten);
    if (unwritten.length > 0) {
      this.log.warn(
        { endpointId, messages: unwritten.map((m) => m.id) },
        'command messages claimed (SENT) for an agent channel that closed before they were written; the agent reads them with GET /command-message/endpoint/{endpoint-id}',
      );
    }
    const written = claimed.filter((m) => !unwritten.includes(m));
    const last = written[written.length - 1];
    if (last) {
      const at = this.now();
      this.registry.delivered(endpointId, Math.max(0, at - Date.parse(last.createdAt)), at);
    }
  }

  /** One move of a message as the agent; undefined when the machine refused it (claimed elsewhere, expired, failed meanwhile). */
  private async claim(m: EndpointCommandMessage, to: CommandMessageStatus, access: Access, reason?: string): Promise<EndpointCommandMessage | undefined> {
    try {
      return await this.mover.claim(m.id, to, access, reason);
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  private failing(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.log.warn({ err: { message: (err as Error).message } }, 'agent channel delivery failed at the store; held agents are woken again every second until it answers');
  }

  private recovered(): void {
    if (!this.warned) return;
    this.warned = false;
    this.log.info('agent channel delivery reaches the store again');
  }
}
