/**
 * Command expiry and bounded retries: a waiting message past its expiry
 * reads EXPIRED in get and list, is not handed to the endpoint's agent, and can no longer
 * move; retries beyond ECS_COMMAND_MAX_RETRIES fail the message with a reason.
 */
import crypto from 'node:crypto';
import { expect } from 'chai';
import { expectErrorBody, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { CommandMessageStore } from '../../src/resources/commands/store.js';

interface Message {
  id: string;
  status: string;
  endpointId: string;
  createdAt: string;
  expiresAt?: string;
  retries?: number;
  failureReason?: string;
}
interface Page<T> {
  totalCount: number;
  items: T[];
}

const MAX_RETRIES = 2;
const DEFAULT_TTL_S = 3;

describe('command expiry and bounded retries', () => {
  let t: TestApp;
  let org: string;
  let admin: Api;

  before(async function () {
    // A loaded machine may take a while to set a fresh app's indices up.
    this.timeout(120_000);
    t = await startTestApp({ ECS_COMMAND_MAX_RETRIES: String(MAX_RETRIES), ECS_COMMAND_TTL: String(DEFAULT_TTL_S) });
    org = await t.world.org();
    admin = t.world.as(await t.world.token('admin', org));
  });
  after(() => t.close());

  async function endpoint(): Promise<{ id: string; agent: Api }> {
    const ep = await t.world.endpoint(org, { hostInfo: { os: 'linux', hostName: uid('h') } });
    return { id: ep.id, agent: t.world.as(await t.world.token('agent', org, ep.id)) };
  }
  async function create(endpointId: string, body: Record<string, unknown> = {}): Promise<Message> {
    const res = await admin.post<Message>(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }
  const get = async (id: string): Promise<Message> => {
    const res = await admin.get<Message>(`/command-message/${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const list = async (as: Api, endpointId: string, query = ''): Promise<string[]> => {
    const res = await as.get<Page<Message>>(`/command-message/endpoint/${endpointId}${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.items.map((m) => m.id);
  };
  const expired = async (id: string): Promise<Message> => {
    const w = await waitFor(() => get(id), (m) => m.status === 'EXPIRED', 30_000, 100);
    expect(w.met, `still ${w.value.status}`).to.equal(true);
    return w.value;
  };

  it('a message carries expiresAt (ECS_COMMAND_TTL, or its own ttlSeconds); past it, it reads EXPIRED in get and list', async () => {
    const { id: ep } = await endpoint();
    const short = await create(ep, { ttlSeconds: 1 });
    expect(Date.parse(short.expiresAt as string) - Date.parse(short.createdAt)).to.equal(1000);
    expect(short.retries).to.equal(0);
    const long = await create(ep, { ttlSeconds: 3600 });
    expect(Date.parse(long.expiresAt as string) - Date.parse(long.createdAt)).to.equal(3600_000);
    const byDefault = await create(ep);
    expect(Date.parse(byDefault.expiresAt as string) - Date.parse(byDefault.createdAt)).to.equal(DEFAULT_TTL_S * 1000);

    await expired(short.id);
    expect((await get(long.id)).status).to.equal('CREATED');
    const all = await admin.get<Page<Message>>(`/command-message/endpoint/${ep}`);
    expect(Object.fromEntries(all.body.items.map((m) => [m.id, m.status]))).to.include({ [short.id]: 'EXPIRED', [long.id]: 'CREATED' });
    // Status filters select by the status as it reads: CREATED leaves the expired one out.
    expect(await list(admin, ep, '?status=CREATED')).to.include(long.id).and.not.include(short.id);
    expect(await list(admin, ep, '?status=EXPIRED')).to.include(short.id).and.not.include(long.id);
  });

  it("the endpoint's agent never receives an expired message, and an expired message can no longer move (409)", async () => {
    const { id: ep, agent } = await endpoint();
    const gone = await create(ep, { ttlSeconds: 1 });
    const kept = await create(ep, { ttlSeconds: 3600 });
    await expired(gone.id);
    expect(await list(agent, ep)).to.deep.equal([kept.id]);
    expect(await list(agent, ep, '?status=CREATED')).to.deep.equal([kept.id]);
    expect(await list(agent, ep, '?status=EXPIRED')).to.deep.equal([]);
    for (const to of ['SENT', 'RETRY', 'MSG_SEND_FAIL']) {
      expectErrorBody(await agent.patch(`/command-message/${gone.id}/status/${to}`), 409);
    }
    expect((await get(gone.id)).status).to.equal('EXPIRED');
    // A message that was sent before its expiry stays SENT: only waiting messages expire.
    const sent = await create(ep, { ttlSeconds: 1 });
    expect((await agent.patch<Message>(`/command-message/${sent.id}/status/SENT`)).status).to.equal(200);
    await expired(gone.id);
    await waitFor(async () => Date.now(), (n) => n > Date.parse(sent.expiresAt as string) + 50, 5_000, 20);
    expect((await get(sent.id)).status).to.equal('SENT');
  });

  it(`retries are bounded: the move into RETRY after ${MAX_RETRIES} fails the message (MSG_SEND_FAIL with a reason)`, async () => {
    const { id: ep } = await endpoint();
    const m = await create(ep, { ttlSeconds: 3600 });
    for (let k = 1; k <= MAX_RETRIES; k++) {
      const res = await admin.patch<Message>(`/command-message/${m.id}/status/RETRY`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ status: 'RETRY', retries: k });
    }
    const last = await admin.patch<Message>(`/command-message/${m.id}/status/RETRY`);
    expect(last.status, last.text).to.equal(200);
    expect(last.body.status).to.equal('MSG_SEND_FAIL');
    expect(last.body.failureReason).to.match(/retries exhausted/);
    expect(last.body.retries).to.equal(MAX_RETRIES);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/RETRY`), 409);
    expect((await get(m.id)).status).to.equal('MSG_SEND_FAIL');
  });

  it('a failure move keeps the reason it carries', async () => {
    const { id: ep } = await endpoint();
    const m = await create(ep, { ttlSeconds: 3600 });
    const res = await admin.patch<Message>(`/command-message/${m.id}/status/MSG_WSS_FAIL`, { failureReason: 'socket closed by peer' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ status: 'MSG_WSS_FAIL', failureReason: 'socket closed by peer' });
  });

  it('a message stored before expiry existed (no expiresAt) expires ECS_COMMAND_TTL after its createdAt', async () => {
    const { id: ep } = await endpoint();
    const store = new CommandMessageStore({ client: t.server.store.client, prefix: RUN_PREFIX, refresh: 'shared' });
    const old = new Date(Date.now() - (DEFAULT_TTL_S + 60) * 1000).toISOString();
    const fresh = new Date().toISOString();
    const legacy = (id: string, at: string) => ({
      id,
      status: 'CREATED' as const,
      endpointId: ep,
      orgId: org,
      module: 'cmd',
      name: 'ping',
      uuid: crypto.randomUUID(),
      ts: at,
      payload: {},
      createdBy: { username: 'legacy', authenticator: 'none' },
      updatedBy: { username: 'legacy', authenticator: 'none' },
      createdAt: at,
      updatedAt: at,
    });
    const [a, b] = [uid('legacy'), uid('legacy')];
    await store.create(legacy(a, old));
    await store.create(legacy(b, fresh));
    await store.visible();
    expect((await get(a)).status).to.equal('EXPIRED');
    expect((await get(a)).expiresAt).to.equal(undefined);
    expect(await list(admin, ep, '?status=EXPIRED')).to.include(a);
    // The fresh one waits, then expires too, without anything rewriting it.
    if (Date.now() - Date.parse(fresh) < DEFAULT_TTL_S * 1000) expect(await list(admin, ep, '?status=CREATED')).to.include(b);
    await expired(b);
  });

  it('the OpenAPI document marks EXPIRED and the expiry fields as extensions', async () => {
    const doc = JSON.stringify((await t.anon.get('/openapi.json')).body);
    expect(doc).to.include('"EXPIRED"');
    expect(doc).to.match(/EXPIRED is an extension status/);
    for (const field of ['expiresAt', 'retries', 'failureReason', 'ttlSeconds']) expect(doc).to.include(`"${field}"`);
  });
});
