/**
 * A command move whose first attempt landed but was answered with an error: Elasticsearch
 * re-sent the write (the re-send meets the write it repeats: 409), or the answer was lost (503)
 * and the gateway repeats its request under the same Idempotency-Key. Either way the message
 * ends SENT with its delivery record, never SENT without it; a repeat without a key, or a
 * rival's move, is refused (docs/adr/0111-command-moves-named-by-their-caller.md). The service
 * reaches the store through a proxy that causes exactly that.
 */
import { expect } from 'chai';
import { Client } from '@elastic/elasticsearch';
import { expectErrorBody, RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { startLossyProxy, type LossyProxy } from '../helpers/lossy-proxy.js';
import type { Api } from '../helpers/http.js';

interface Message {
  id: string;
  uuid: string;
  status: string;
  retries?: number;
}

const MOVE = /^POST \/[^/]*-command-messages\/_update\//;

describe('command moves re-sent by the store', function () {
  this.timeout(300_000);
  let proxy: LossyProxy;
  let app: TestApp;
  let admin: Api;
  let endpointId: string;
  let org: string;

  before(async () => {
    proxy = await startLossyProxy((await testElasticsearch()).url);
    app = await startTestApp({}, { elasticsearchUrl: proxy.url });
    org = await app.world.org();
    admin = app.world.as(await app.world.token('admin', org));
    endpointId = (await app.world.endpoint(org)).id;
  });
  after(async () => {
    await app?.close();
    await proxy?.close();
  });

  async function message(to = endpointId): Promise<Message> {
    const res = await admin.post<Message>(`/command-message/endpoint/${to}`, { module: 'cmd', name: 'ping' });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  it('a SENT move Elasticsearch applied and then answered 409 on its re-send is answered 200 and records its delivery', async () => {
    const m = await message();
    const before = proxy.resent.length;
    proxy.resendNext(MOVE);
    const moved = await admin.patch<Message>(`/command-message/${m.id}/status/SENT`);
    expect(proxy.resent.slice(before)).to.have.length(1);
    expect(proxy.resent[before]).to.include({ first: 200, second: 409 });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.status).to.equal('SENT');
    const delivery = await admin.get<{ uuid: string; status: string }>(`/command-message/delivery/${m.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    expect(delivery.body).to.include({ uuid: m.uuid, status: 'DELIVERED' });
  });

  it('a re-sent RETRY move counts one retry', async () => {
    const m = await message();
    proxy.resendNext(MOVE);
    const moved = await admin.patch<Message>(`/command-message/${m.id}/status/RETRY`);
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body).to.include({ status: 'RETRY', retries: 1 });
    expect((await admin.get<Message>(`/command-message/${m.id}`)).body.retries).to.equal(1);
  });

  it('a SENT move whose answer was lost (503) is completed by its repeat under the same Idempotency-Key: the delivery is written once, the move made once', async () => {
    const m = await message();
    const key = { headers: { 'Idempotency-Key': `move-${m.id}` } };
    proxy.loseAnswerOfNext(MOVE);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`, undefined, key), 503);
    const landed = (await admin.get<Message>(`/command-message/${m.id}`)).body;
    expect(landed.status).to.equal('SENT');
    expectErrorBody(await admin.get(`/command-message/delivery/${m.uuid}`), 404);
    const repeat = await admin.patch<Message>(`/command-message/${m.id}/status/SENT`, undefined, key);
    expect(repeat.status, repeat.text).to.equal(200);
    expect(repeat.body).to.deep.equal(landed);
    const delivery = await admin.get<{ status: string }>(`/command-message/delivery/${m.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    expect(delivery.body.status).to.equal('DELIVERED');
    // The outcome is kept: the same key answers it again, with nothing written.
    const again = await admin.patch<Message>(`/command-message/${m.id}/status/SENT`, undefined, key);
    expect(again.status, again.text).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await admin.get<Message>(`/command-message/${m.id}`)).body).to.deep.equal(landed);
  });

  it('a SENT move for a message that is SENT without its delivery record is a 409 without a key (the state cannot tell a repeat from a rival), and the refusal completes the record', async () => {
    const m = await message();
    proxy.loseAnswerOfNext(MOVE);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`), 503);
    const sent = (await admin.get<Message & { updatedAt: string; updatedBy: { username: string } }>(`/command-message/${m.id}`)).body;
    expect(sent.status).to.equal('SENT');
    expectErrorBody(await admin.get(`/command-message/delivery/${m.uuid}`), 404);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`), 409);
    const delivery = await admin.get<{ status: string; createdAt: string; createdBy: string }>(`/command-message/delivery/${m.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    // The record of the move that landed: its time and author, not the refused caller's.
    expect(delivery.body).to.include({ status: 'DELIVERED', createdAt: sent.updatedAt, createdBy: sent.updatedBy.username });
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`, undefined, { headers: { 'Idempotency-Key': `other-${m.id}` } }), 409);
    expect((await admin.get<{ createdAt: string }>(`/command-message/delivery/${m.uuid}`)).body.createdAt).to.equal(sent.updatedAt);
  });

  it('a SENT move whose endpoint cannot be stamped (its index refusing writes, as in a reindex\u2019s swap) lands, is answered 200 and records its delivery', async () => {
    // An endpoint of its own: one stamped a moment ago is not stamped again.
    const target = (await app.world.endpoint(org)).id;
    const seenBefore = (await admin.get<{ lastSeen?: string }>(`/endpoint/${target}`)).body.lastSeen;
    const m = await message(target);
    const es = new Client({ node: (await testElasticsearch()).url });
    const endpoints = `${RUN_PREFIX}-endpoints`;
    await es.indices.putSettings({ index: endpoints, settings: { 'index.blocks.write': true } });
    let moved;
    try {
      moved = await admin.patch<Message>(`/command-message/${m.id}/status/SENT`);
    } finally {
      await es.indices.putSettings({ index: endpoints, settings: { 'index.blocks.write': false } });
      await es.close();
    }
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.status).to.equal('SENT');
    const delivery = await admin.get<{ status: string }>(`/command-message/delivery/${m.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    expect(delivery.body.status).to.equal('DELIVERED');
    // The refused stamp was not remembered as written: the endpoint's next sign of life writes it.
    expect((await admin.get<{ lastSeen?: string }>(`/endpoint/${target}`)).body.lastSeen).to.equal(seenBefore);
    const next = await message(target);
    expect((await admin.patch(`/command-message/${next.id}/status/SENT`)).status).to.equal(200);
    const seenAfter = (await admin.get<{ lastSeen?: string }>(`/endpoint/${target}`)).body.lastSeen;
    expect(seenAfter, 'lastSeen written by the next sign of life').to.be.a('string');
    expect(seenAfter).to.not.equal(seenBefore);
  });

  it('a conflict that is not the move itself stays a 409', async () => {
    const m = await message();
    const first = await admin.patch<Message>(`/command-message/${m.id}/status/MSG_WSS_FAIL`);
    expect(first.status, first.text).to.equal(200);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`), 409);
    expectErrorBody(await admin.get(`/command-message/delivery/${m.uuid}`), 404);
  });
});

describe('rival command moves through two instances', function () {
  this.timeout(300_000);
  const CALLERS = 10;
  let a: TestApp;
  let b: TestApp;

  before(async () => {
    a = await startTestApp();
    b = await startTestApp();
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  for (const keyed of [false, true]) {
    it(`${CALLERS} callers moving one CREATED message to SENT at once${keyed ? ', each with its own Idempotency-Key,' : ''} get one 200 and ${CALLERS - 1} 409s, and one delivery`, async () => {
      const org = await a.world.org();
      const token = await a.world.token('admin', org);
      const [viaA, viaB] = [a.world.as(token), b.world.as(token)];
      const endpointId = (await a.world.endpoint(org)).id;
      for (let run = 0; run < 5; run++) {
        const m = await viaA.post<Message>(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping' });
        expect(m.status, m.text).to.equal(201);
        const results = await Promise.all(
          Array.from({ length: CALLERS }, (_, i) =>
            (i % 2 ? viaB : viaA).patch<Message>(`/command-message/${m.body.id}/status/SENT`, undefined, keyed ? { headers: { 'Idempotency-Key': `caller-${i}` } } : {}),
          ),
        );
        const counts = results.reduce<Record<number, number>>((c, r) => ({ ...c, [r.status]: (c[r.status] ?? 0) + 1 }), {});
        expect(counts, results.map((r) => r.text).join('\n')).to.deep.equal({ 200: 1, 409: CALLERS - 1 });
        const delivery = await viaB.get<{ status: string }>(`/command-message/delivery/${m.body.uuid}`);
        expect(delivery.status, delivery.text).to.equal(200);
      }
    });
  }
});
