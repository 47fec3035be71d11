/**
 * A thousand agents hold their channel on one instance (half WebSocket, half long poll):
 * commands created for some of them reach exactly those agents, each once, and the long polls
 * of the others end [] when their wait does, all on the channel's one shared tick. Client and
 * server sockets (about 2,000) fit a default Linux limit: Node raises its soft open-files limit
 * (1,024) to the hard one (4,096) at start; one source address has ports enough for 1,000.
 */
import { expect } from 'chai';
import { uid, useTenants } from '../helpers/app.js';
import { createEndpointDocs, agentDoc } from '../helpers/endpoint-store.js';
import { retryPause, waitFor } from '../helpers/wait.js';
import { createMessage, longPoll, SimSocket, type ChannelMessage } from '../helpers/agent-channel.js';

const AGENTS = 1000;
const COMMANDED = 50;
/** The long polls' wait: the ones without a command end [] after it. */
const WAIT_SECONDS = 15;

/** Runs `work` over `items`, `parallel` at a time. */
async function pooled<T, R>(items: readonly T[], parallel: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i], i);
      }
    }),
  );
  return out;
}

describe('a thousand agents holding the channel on one instance', function () {
  this.timeout(300_000);
  const w = useTenants();

  it('commands reach exactly their agents, each once; the other long polls end [] with their wait', async () => {
    const t = w.t;
    const org = await t.world.org();
    const ids = Array.from({ length: AGENTS }, () => uid('held'));
    await createEndpointDocs(t.server.store, ids.map((id) => agentDoc(id, org)));
    const tokens = await pooled(ids, 16, (id) => t.world.token('agent', org, id));
    const channels = t.server.handle.services.agentChannel;
    const before = channels.registry.size;

    const sockets = await pooled(ids.slice(0, AGENTS / 2), 32, async (_id, i) => {
      for (;;) {
        try {
          return await SimSocket.open(t.url, tokens[i]);
        } catch (err) {
          // Shed by the check-in lane: taken up again after its advice, as an agent does.
          if ((err as { status?: number }).status !== 503) throw err;
          await retryPause(100);
        }
      }
    });
    // What the long polls met before they were held (shed check-ins, failed connections), for the failure message.
    const met = new Map<string, number>();
    const note = (what: string): void => void met.set(what, (met.get(what) ?? 0) + 1);
    const polls = ids.slice(AGENTS / 2).map(async (_id, k) => {
      const api = t.world.as(tokens[AGENTS / 2 + k]);
      for (;;) {
        try {
          const res = await longPoll(api, WAIT_SECONDS);
          if (res.status === 200) return res;
          note(String(res.status));
          await retryPause(Number(res.headers.get('retry-after') ?? 0) * 100 + 100);
        } catch (err) {
          // A connection the loaded machine failed: taken up again, as an agent does.
          note((err as Error).message.slice(0, 80));
          await retryPause(100);
        }
      }
    });
    const held = await waitFor(async () => channels.registry.size - before, (n) => n >= AGENTS, 60_000, 50);
    expect(held.met, `${held.value} of ${AGENTS} held; the long polls met ${JSON.stringify([...met])}`).to.equal(true);

    // Commands for every twentieth agent: half of them on WebSockets, half on long polls.
    const targets = ids.filter((_, i) => i % (AGENTS / COMMANDED) === 0);
    const created = new Map<string, string>();
    await pooled(targets, 8, async (id) => created.set(id, (await createMessage(w.t.admin, id)).id));

    const frames = (): ChannelMessage[] => sockets.flatMap((s) => s.frames);
    const framed = await waitFor(async () => frames().length, (n) => n >= COMMANDED / 2, 20_000, 50);
    expect(framed.met, `${framed.value} frames`).to.equal(true);
    const answers = await Promise.all(polls);
    for (const s of sockets) s.close();

    const delivered = [...frames(), ...answers.flatMap((r) => r.body)];
    expect(delivered.map((m) => m.id).sort()).to.deep.equal([...created.values()].sort());
    for (const m of delivered) expect(created.get(m.endpointId)).to.equal(m.id);
    expect(answers.every((r) => r.status === 200)).to.equal(true);
    const empty = answers.filter((r) => r.body.length === 0).length;
    expect(empty).to.equal(AGENTS / 2 - COMMANDED / 2);
    const gone = await waitFor(async () => channels.registry.size - before, (n) => n <= 0, 20_000, 50);
    expect(gone.met, `${gone.value} still held`).to.equal(true);
  });
});
