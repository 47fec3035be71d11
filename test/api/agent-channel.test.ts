/**
 * The agent channel (GET /agent/channel, extension): a held long poll and the same path as a
 * WebSocket deliver an agent's commands at once, each exactly once, moved to SENT with their
 * delivery records; only the endpoint's own agent token holds it.
 */
import { expect } from 'chai';
import { expectErrorBody, useTenants } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { createMessage, longPoll, simAgent, SimSocket, type ChannelMessage } from '../helpers/agent-channel.js';

/** How soon a command created while an agent holds its channel must reach it. */
const WITHIN_MS = 1000;

describe('the agent channel: long poll and WebSocket', function () {
  // Index set-up of the run's app on a loaded machine.
  this.timeout(120_000);
  const w = useTenants();

  it('a held long poll is answered with a command created meanwhile, moved to SENT with its delivery record', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const held = longPoll(agent.api, 30);
    // The poll is held (nothing ready) until the command exists.
    await waitFor(async () => w.t.server.handle.services.agentChannel.state(agent.endpointId).held, (n) => n === 1, 5000);
    const createdAt = performance.now();
    const msg = await createMessage(w.adminA, agent.endpointId);
    const res = await held;
    const latency = performance.now() - createdAt;
    expect(res.status, res.text).to.equal(200);
    expect(res.body.map((m) => m.id)).to.deep.equal([msg.id]);
    expect(res.body[0].status).to.equal('SENT');
    expect(latency).to.be.lessThan(WITHIN_MS);
    const stored = await w.adminA.get<ChannelMessage>(`/command-message/${msg.id}`);
    expect(stored.body).to.deep.equal(res.body[0]);
    const delivery = await w.adminA.get<{ status: string; endpointId: string }>(`/command-message/delivery/${msg.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    expect(delivery.body).to.include({ status: 'DELIVERED', endpointId: agent.endpointId });
  });

  it('?wait=0 answers at once: the ready messages oldest first, then [] once they are SENT', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const first = await createMessage(w.adminA, agent.endpointId);
    const second = await createMessage(w.adminA, agent.endpointId);
    const res = await longPoll(agent.api, 0);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.map((m) => m.id)).to.deep.equal([first.id, second.id]);
    expect(res.body.every((m) => m.status === 'SENT')).to.equal(true);
    const again = await longPoll(agent.api, 0);
    expect(again.body).to.deep.equal([]);
  });

  it('a long poll whose wait ends with nothing ready is answered []', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const start = performance.now();
    const res = await longPoll(agent.api, 1);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal([]);
    expect(performance.now() - start).to.be.greaterThan(900);
  });

  it('the WebSocket sends each command as one JSON text frame, the message as GET /command-message/{id} answers it', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const ready = await createMessage(w.adminA, agent.endpointId);
    const sock = await SimSocket.open(w.t.url, agent.token);
    try {
      // What was ready before the channel was taken up comes at once.
      expect((await waitFor(async () => sock.frames.length, (n) => n === 1, 5000)).met).to.equal(true);
      const createdAt = performance.now();
      const msg = await createMessage(w.adminA, agent.endpointId, { payload: { script: 'whoami' } });
      const got = await waitFor(async () => sock.frames.length, (n) => n === 2, 5000);
      expect(got.met).to.equal(true);
      expect(performance.now() - createdAt).to.be.lessThan(WITHIN_MS);
      expect(sock.frames.map((f) => f.id)).to.deep.equal([ready.id, msg.id]);
      for (const f of sock.frames) {
        const stored = await w.adminA.get<ChannelMessage>(`/command-message/${f.id}`);
        expect(f).to.deep.equal(stored.body);
        expect(f.status).to.equal('SENT');
      }
    } finally {
      sock.close();
    }
  });

  it('another agent holds only its own channel: it never receives this agent’s commands', async () => {
    const [a, b] = await Promise.all([simAgent(w.t, w.orgA), simAgent(w.t, w.orgA)]);
    const sockB = await SimSocket.open(w.t.url, b.token);
    try {
      const msg = await createMessage(w.adminA, a.endpointId);
      const mine = await longPoll(a.api, 5);
      expect(mine.body.map((m) => m.id)).to.deep.equal([msg.id]);
      const other = await longPoll(b.api, 0);
      expect(other.body).to.deep.equal([]);
      expect(sockB.frames).to.deep.equal([]);
      // Another agent's token cannot read this agent's channel state either.
      expectErrorBody(await b.api.get(`/endpoint/${a.endpointId}/channel`), 403);
    } finally {
      sockB.close();
    }
  });

  it('an admin token is refused (403), and no token is 401, on the long poll and the WebSocket', async () => {
    expectErrorBody(await w.adminA.get('/agent/channel?wait=0'), 403);
    expectErrorBody(await w.t.admin.get('/agent/channel?wait=0'), 403);
    expectErrorBody(await w.t.anon.get('/agent/channel?wait=0'), 401);
    for (const [token, status] of [[w.adminA.token, 403], [w.t.admin.token, 403], [undefined, 401], ['ecs_not-a-token', 401]] as const) {
      const refused = await SimSocket.open(w.t.url, token).then(
        () => undefined,
        (err: { status?: number; body?: string }) => err,
      );
      expect(refused?.status, `upgrade with ${token ?? 'no token'}`).to.equal(status);
      expect(JSON.parse(refused?.body ?? '{}')).to.include({ status, path: '/endpoint-control-service/v1/agent/channel' });
    }
  });

  it('a message that expired or was failed before delivery is never delivered', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const expiring = await createMessage(w.adminA, agent.endpointId, { ttlSeconds: 1 });
    const failed = await createMessage(w.adminA, agent.endpointId);
    const moved = await w.adminA.patch(`/command-message/${failed.id}/status/MSG_SEND_FAIL`, { failureReason: 'withdrawn by the operator' });
    expect(moved.status, moved.text).to.equal(200);
    const expired = await waitFor(
      () => w.adminA.get<ChannelMessage>(`/command-message/${expiring.id}`),
      (r) => r.body.status === 'EXPIRED',
      10_000,
      100,
    );
    expect(expired.met).to.equal(true);
    const sock = await SimSocket.open(w.t.url, agent.token);
    try {
      expect((await longPoll(agent.api, 0)).body).to.deep.equal([]);
      const fresh = await createMessage(w.adminA, agent.endpointId);
      expect((await waitFor(async () => sock.frames.length, (n) => n >= 1, 5000)).met).to.equal(true);
      expect(sock.frames.map((f) => f.id)).to.deep.equal([fresh.id]);
      expect((await w.adminA.get<ChannelMessage>(`/command-message/${expiring.id}`)).body.status).to.equal('EXPIRED');
    } finally {
      sock.close();
    }
  });

  it('the console reads the channel: kind, since when, and the last delivery latency', async () => {
    const agent = await simAgent(w.t, w.orgA);
    const sock = await SimSocket.open(w.t.url, agent.token);
    try {
      await createMessage(w.adminA, agent.endpointId);
      expect((await waitFor(async () => sock.frames.length, (n) => n === 1, 5000)).met).to.equal(true);
      const state = await waitFor(
        () => w.readerA.get<{ kind?: string; since?: string; held: number; lastDeliveryLatencyMs?: number }>(`/endpoint/${agent.endpointId}/channel`),
        (r) => r.body.lastDeliveryLatencyMs !== undefined,
        5000,
      );
      expect(state.value.status, state.value.text).to.equal(200);
      expect(state.value.body).to.include({ kind: 'WEBSOCKET', held: 1 });
      expect(Date.parse(String(state.value.body.since))).to.be.closeTo(Date.now(), 60_000);
      expect(state.value.body.lastDeliveryLatencyMs).to.be.within(0, 60_000);
      // Operators read the channels held per kind from /metrics.
      const metrics = await w.t.anon.get('/metrics');
      expect(Number(/^ecs_agent_channels_held\{kind="WEBSOCKET"\} (\d+)$/m.exec(metrics.text)?.[1])).to.be.at.least(1);
    } finally {
      sock.close();
    }
  });
});
