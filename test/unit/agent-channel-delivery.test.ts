/**
 * Delivery through held channels (src/resources/agent-channel/delivery.ts) with a recorded
 * command pipeline: a message is written only by the channel whose claim (the SENT move) was
 * answered; a WebSocket that cannot take a frame moves its messages to RETRY (docs/adr/0114);
 * messages claimed for a channel that went meanwhile go to the agent's other channel.
 */
import { expect } from 'chai';
import type { Access } from '../../src/access/access.js';
import { ConflictError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { ChannelDelivery, FRAME_NOT_WRITTEN, type MessageMover, type ReadySource } from '../../src/resources/agent-channel/delivery.js';
import type { ChannelKind, HeldChannel } from '../../src/resources/agent-channel/model.js';
import { ChannelRegistry } from '../../src/resources/agent-channel/registry.js';
import type { CommandMessageStatus, EndpointCommandMessage } from '../../src/resources/commands/model.js';

const access = {} as unknown as Access;

function message(id: string, endpointId = 'ep-1'): EndpointCommandMessage {
  const now = new Date().toISOString();
  const who = { username: 'soc', authenticator: 'token' };
  return {
    id, endpointId, orgId: 'org-1', status: 'CREATED', module: 'cmd', name: 'ping', uuid: `u-${id}`, ts: now, payload: {},
    createdBy: who, updatedBy: who, createdAt: now, updatedAt: now, version: { sequenceNumber: 1, primaryTerm: 1 },
  };
}

class FakeChannel implements HeldChannel {
  readonly since = Date.now();
  readonly access = access;
  readonly got: EndpointCommandMessage[] = [];
  ended: string | undefined;
  constructor(
    readonly endpointId: string,
    readonly kind: ChannelKind,
    public open = true,
    /** Goes away between the claim and the write. */
    public dropsOnWrite = false,
  ) {}
  writable(): boolean {
    return this.open && this.ended === undefined;
  }
  deliver(messages: EndpointCommandMessage[]): Promise<EndpointCommandMessage[]> {
    if (this.dropsOnWrite) return Promise.resolve(messages);
    this.got.push(...messages);
    return Promise.resolve([]);
  }
  end(why: 'expired' | 'shutdown'): void {
    this.ended = why;
  }
}

/** The pipeline: each message may move once (a second claim is 409, as a rival's is). */
function pipeline(ready: EndpointCommandMessage[]): { mover: MessageMover; source: ReadySource; moves: { id: string; to: CommandMessageStatus; reason?: string }[] } {
  const moved = new Set<string>();
  const moves: { id: string; to: CommandMessageStatus; reason?: string }[] = [];
  return {
    moves,
    source: {
      readyFor: (ids) => Promise.resolve(new Map(ids.map((id) => [id, ready.filter((m) => m.endpointId === id && !moved.has(m.id))]))),
    },
    mover: {
      claim: (id, to, _a, reason) => {
        if (moved.has(id)) return Promise.reject(new ConflictError(`command message ${id} cannot move`));
        moved.add(id);
        moves.push({ id, to, ...(reason ? { reason } : {}) });
        return Promise.resolve({ ...message(id), status: to });
      },
    },
  };
}

async function pass(delivery: ChannelDelivery, endpointId: string): Promise<void> {
  await delivery.checkIn(endpointId);
}

describe('agent channel delivery', () => {
  const log = createLogger('silent');

  it('claims each message once and writes it to the newest writable channel only', async () => {
    const registry = new ChannelRegistry();
    const older = new FakeChannel('ep-1', 'WEBSOCKET');
    const newer = new FakeChannel('ep-1', 'LONG_POLL');
    registry.add(older);
    registry.add(newer);
    const p = pipeline([message('m1'), message('m2')]);
    const delivery = new ChannelDelivery(registry, p.source, p.mover, log);
    await Promise.all([pass(delivery, 'ep-1'), pass(delivery, 'ep-1')]);
    expect(newer.got.map((m) => m.id)).to.deep.equal(['m1', 'm2']);
    expect(newer.got.every((m) => m.status === 'SENT')).to.equal(true);
    expect(older.got).to.deep.equal([]);
    expect(p.moves.map((m) => m.to)).to.deep.equal(['SENT', 'SENT']);
    expect(registry.state('ep-1').lastDeliveryLatencyMs).to.be.a('number');
  });

  it('a WebSocket that cannot take a frame is ended and its messages move to RETRY, never SENT', async () => {
    const registry = new ChannelRegistry();
    const stalled = new FakeChannel('ep-1', 'WEBSOCKET', false);
    registry.add(stalled);
    const p = pipeline([message('m1')]);
    await pass(new ChannelDelivery(registry, p.source, p.mover, log), 'ep-1');
    expect(p.moves).to.deep.equal([{ id: 'm1', to: 'RETRY', reason: FRAME_NOT_WRITTEN }]);
    expect(stalled.ended).to.equal('shutdown');
    expect(registry.channels('ep-1')).to.deep.equal([]);
  });

  it('messages claimed for a channel that went before the write go to the agent’s other channel', async () => {
    const registry = new ChannelRegistry();
    const other = new FakeChannel('ep-1', 'WEBSOCKET');
    const going = new FakeChannel('ep-1', 'WEBSOCKET', true, true);
    registry.add(other);
    registry.add(going);
    const p = pipeline([message('m1')]);
    await pass(new ChannelDelivery(registry, p.source, p.mover, log), 'ep-1');
    expect(other.got.map((m) => m.id)).to.deep.equal(['m1']);
    expect(p.moves).to.deep.equal([{ id: 'm1', to: 'SENT' }]);
  });

  it('an endpoint nobody woke is never read, and one held nowhere here is ignored', async () => {
    const registry = new ChannelRegistry();
    registry.add(new FakeChannel('ep-1', 'LONG_POLL'));
    const read: string[][] = [];
    const p = pipeline([message('m1')]);
    const source: ReadySource = { readyFor: (ids, n) => (read.push([...ids]), p.source.readyFor(ids, n)) };
    const delivery = new ChannelDelivery(registry, source, p.mover, log);
    delivery.wake(['ep-2', 'ep-3']);
    await pass(delivery, 'ep-1');
    expect(read).to.deep.equal([['ep-1']]);
  });
});
