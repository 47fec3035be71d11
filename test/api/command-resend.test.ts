/**
 * A command move whose first attempt landed but was answered with an error: Elasticsearch
 * re-sent the write (the re-send meets the write it repeats: 409), or the answer was lost (503)
 * and the gateway retries. Either way the message ends SENT with its delivery record, never
 * SENT without it. The service reaches the store through a proxy that causes exactly that.
 */
import { expect } from 'chai';
import { expectErrorBody, startTestApp, type TestApp } from '../helpers/app.js';
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

  before(async () => {
    proxy = await startLossyProxy((await testElasticsearch()).url);
    app = await startTestApp({}, { elasticsearchUrl: proxy.url });
    const org = await app.world.org();
    admin = app.world.as(await app.world.token('admin', org));
    endpointId = (await app.world.endpoint(org)).id;
  });
  after(async () => {
    await app?.close();
    await proxy?.close();
  });

  async function message(): Promise<Message> {
    const res = await admin.post<Message>(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping' });
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

  it('a SENT move whose answer was lost (503) is completed by the retry: the delivery record is written, and only once is it a move', async () => {
    const m = await message();
    proxy.loseAnswerOfNext(MOVE);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`), 503);
    expect((await admin.get<Message>(`/command-message/${m.id}`)).body.status).to.equal('SENT');
    expectErrorBody(await admin.get(`/command-message/delivery/${m.uuid}`), 404);
    const retry = await admin.patch<Message>(`/command-message/${m.id}/status/SENT`);
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.body.status).to.equal('SENT');
    const delivery = await admin.get<{ status: string }>(`/command-message/delivery/${m.uuid}`);
    expect(delivery.status, delivery.text).to.equal(200);
    expect(delivery.body.status).to.equal('DELIVERED');
    // Complete now: SENT is final, another SENT is refused as before.
    const again = await admin.patch(`/command-message/${m.id}/status/SENT`);
    expectErrorBody(again, 409);
  });

  it('a conflict that is not the move itself stays a 409', async () => {
    const m = await message();
    const first = await admin.patch<Message>(`/command-message/${m.id}/status/MSG_WSS_FAIL`);
    expect(first.status, first.text).to.equal(200);
    expectErrorBody(await admin.patch(`/command-message/${m.id}/status/SENT`), 409);
    expectErrorBody(await admin.get(`/command-message/delivery/${m.uuid}`), 404);
  });
});
