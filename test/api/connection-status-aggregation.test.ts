/**
 * GET /endpoint/connection-status/aggregation (extension, issue 13): live endpoints by family
 * and connection status within an organization, its children, or everything the caller sees.
 */
import { expect } from 'chai';
import { expectErrorBody, startTestApp, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';

interface Bucket {
  family: string;
  connectionStatus: string;
  count: number;
}

describe('GET /endpoint/connection-status/aggregation (endpoints by family and status)', () => {
  let t: TestApp;
  let msp: string;
  let cust: string;
  let other: string;
  let mspReader: Api;

  const asMap = (b: Bucket[]) => Object.fromEntries(b.map((x) => [`${x.family} ${x.connectionStatus}`, x.count]));

  before(async () => {
    t = await startTestApp();
    msp = await t.world.org();
    [cust, other] = await Promise.all([t.world.org(msp), t.world.org()]);
    mspReader = t.world.as(await t.world.token('reader', msp));
    await Promise.all([t.world.endpoint(msp), t.world.endpoint(msp), t.world.endpoint(cust), t.world.endpoint(other), t.world.lte(cust)]);
    const utms = await Promise.all([t.world.utm(msp), t.world.utm(msp), t.world.utm(cust), t.world.utm(other)]);
    for (const [u, s] of [
      [utms[0], 'CONNECTED'],
      [utms[1], 'DISCONNECTED'],
      [utms[2], 'CONNECTED'],
      [utms[3], 'CONNECTED'],
    ] as const) {
      expect((await t.admin.patch(`/utm-endpoint/${u.id}/connectionStatus/${s}`)).status).to.equal(200);
    }
    const gone = await t.world.endpoint(msp);
    expect((await t.admin.delete(`/endpoint/${gone.id}`)).status).to.be.oneOf([200, 204]);
  });
  after(() => t.close());

  const get = async (api: Api, query = '') => {
    const res = await api.get<Bucket[]>(`/endpoint/connection-status/aggregation${query}`);
    expect(res.status, res.text).to.equal(200);
    return asMap(res.body);
  };

  it("counts every live endpoint the caller sees when no organization is named (deleted ones and other tenants' not)", async () => {
    expect(await get(mspReader)).to.deep.equal({ 'agent NEVER': 3, 'utm CONNECTED': 2, 'utm DISCONNECTED': 1, 'lte NEVER': 1 });
  });

  it('counts one organization, or it and its children', async () => {
    expect(await get(mspReader, `?orgId=${msp}`)).to.deep.equal({ 'agent NEVER': 2, 'utm CONNECTED': 1, 'utm DISCONNECTED': 1 });
    expect(await get(mspReader, `?orgId=${msp}&includeChildren=true`)).to.deep.equal(await get(mspReader));
    expect(await get(mspReader, `?orgId=${cust}`)).to.deep.equal({ 'agent NEVER': 1, 'utm CONNECTED': 1, 'lte NEVER': 1 });
  });

  it("refuses another tenant's organization (403), an agent token (403) and no token (401)", async () => {
    expectErrorBody(await mspReader.get(`/endpoint/connection-status/aggregation?orgId=${other}`), 403);
    const ep = await t.world.endpoint(cust);
    expectErrorBody(await t.world.as(await t.world.token('agent', cust, ep.id)).get('/endpoint/connection-status/aggregation'), 403);
    expectErrorBody(await t.anon.get('/endpoint/connection-status/aggregation'), 401);
  });
});
