import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { startTestApp, expectErrorBody, uid, type EndpointRecord, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { aliasName } from '../../src/store/client.js';
import { ServiceUnavailableError } from '../../src/errors.js';

type Bulk = (req: estypes.BulkRequest, opts?: unknown) => Promise<estypes.BulkResponse>;

/**
 * Group commit of connection-state updates (EndpointStore.updateConnectionState): concurrent connect,
 * disconnect and uninstall notifications share bulk requests; each caller is answered with
 * its own item's outcome, and only after Elasticsearch acknowledged the bulk.
 */
describe('connection-state updates: group commit', () => {
  let t: TestApp;
  let orgA: string;
  let client: { bulk: Bulk };
  let realBulk: Bulk;
  /** Bulk requests to the endpoints index seen: the number of update items each carried. */
  let bulkSizes: number[];
  /** While set, every bulk waits for it before going out. */
  let gate: Promise<void> | undefined;

  before(async () => {
    t = await startTestApp();
    ({ orgA } = await t.world.tenants());
    // The spy sits on the app's Elasticsearch client: only bulks to the endpoints index are counted and held.
    const endpoints = aliasName(t.server.store.prefix, 'endpoints');
    client = t.server.store.client as unknown as { bulk: Bulk };
    realBulk = client.bulk.bind(client);
    client.bulk = async (req, opts) => {
      if (req.index !== endpoints) return realBulk(req, opts);
      bulkSizes.push((req.operations ?? []).filter((op) => typeof op === 'object' && op !== null && 'update' in op).length);
      if (gate) await gate;
      return realBulk(req, opts);
    };
  });
  beforeEach(() => {
    bulkSizes = [];
    gate = undefined;
  });
  after(async () => {
    client.bulk = realBulk;
    await t.close();
  });

  const get = (id: string): Promise<EndpointRecord> => t.world.endpointRecord(id);

  it('answers every caller of a shared bulk with its own outcome: 204, or 404 for an unknown or deleted endpoint', async () => {
    const live = await Promise.all(Array.from({ length: 12 }, () => t.world.endpoint(orgA)));
    const deleted = await Promise.all(Array.from({ length: 3 }, () => t.world.endpoint(orgA)));
    for (const e of deleted) expect((await t.admin.delete(`/endpoint/${e.id}`)).status).to.equal(204);
    const unknown = [uid('missing'), uid('missing'), uid('missing')];
    const agents = await Promise.all(live.slice(0, 4).map(async (e) => t.world.as(await t.world.token('agent', e.orgId, e.id))));

    // Hold the first bulk so the others queue behind it and leave together.
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const actions = ['connect', 'disconnect', 'uninstall'] as const;
    const calls = [
      ...live.map((e, k) => ({ id: e.id, action: actions[k % 3], api: k < 4 ? agents[k] : t.admin, expect: 204 })),
      ...deleted.map((e) => ({ id: e.id, action: 'connect' as const, api: t.admin, expect: 404 })),
      ...unknown.map((id) => ({ id, action: 'disconnect' as const, api: t.admin, expect: 404 })),
    ];
    // Every agent token is looked up once before, so a call that reached the server goes straight to the store.
    for (const [k, api] of agents.entries()) expect((await api.get(`/endpoint/${live[k].id}`)).status).to.equal(200);
    let arrived = 0;
    const onRequest = (m: unknown): void => {
      if (/\/(connect|disconnect|uninstall)$/.test((m as { request: IncomingMessage }).request.url ?? '')) arrived += 1;
    };
    diagnostics.subscribe('http.server.request.start', onRequest);
    const pending = calls.map((c) => c.api.post(`/endpoint/${c.id}/${c.action}`));
    try {
      // The first bulk is held; the calls arriving meanwhile queue behind it.
      const queued = await waitFor(async () => ({ arrived, bulks: bulkSizes.length }), (v) => v.arrived === calls.length && v.bulks === 1, 10_000);
      expect(queued.met, JSON.stringify(queued.value)).to.equal(true);
      await new Promise((r) => setImmediate(r));
    } finally {
      diagnostics.unsubscribe('http.server.request.start', onRequest);
    }
    open();
    const answers = await Promise.all(pending);

    answers.forEach((res, k) => {
      if (calls[k].expect === 204) expect(res.status, `${calls[k].action} ${calls[k].id}: ${res.text}`).to.equal(204);
      else expectErrorBody(res, 404);
    });
    expect(bulkSizes.reduce((a, b) => a + b, 0)).to.equal(calls.length);
    expect(Math.max(...bulkSizes), `bulk sizes ${bulkSizes.join(',')}`).to.be.greaterThan(1);
    const status = { connect: 'CONNECTED', disconnect: 'DISCONNECTED', uninstall: 'UNINSTALLED' };
    for (const [k, e] of live.entries()) {
      const r = await get(e.id);
      expect(r.connectionStatus).to.equal(status[actions[k % 3]]);
      expect(r.version).to.equal(e.version + 1);
    }
    for (const e of deleted) expectErrorBody(await t.admin.get(`/endpoint/${e.id}`), 404);
  });

  it('sends no answer before the bulk carrying the write is acknowledged', async () => {
    const e = await t.world.endpoint(orgA);
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    let answered = false;
    const pending = t.admin.post(`/endpoint/${e.id}/connect`).then((res) => {
      answered = true;
      return res;
    });
    expect((await waitFor(async () => bulkSizes.length, (n) => n === 1, 10_000)).met).to.equal(true);
    // The bulk is out and held: the answer must wait for it, however long it takes.
    await new Promise((r) => setImmediate(r));
    expect(answered).to.equal(false);
    expect(bulkSizes).to.deep.equal([1]);
    open();
    expect((await pending).status).to.equal(204);
    expect((await get(e.id)).connectionStatus).to.equal('CONNECTED');
  });

  it('answers 503 with Retry-After to every caller of a bulk that fails as a whole, then serves again', async () => {
    const es = await Promise.all(Array.from({ length: 4 }, () => t.world.endpoint(orgA)));
    client.bulk = async (req, opts) => {
      if (req.index !== aliasName(t.server.store.prefix, 'endpoints')) return realBulk(req, opts);
      throw new ServiceUnavailableError();
    };
    try {
      const answers = await Promise.all(es.map((e) => t.admin.post(`/endpoint/${e.id}/connect`)));
      for (const res of answers) {
        expectErrorBody(res, 503);
        expect(res.headers.get('retry-after')).to.be.a('string');
      }
    } finally {
      client.bulk = realBulk;
    }
    for (const e of es) expect((await get(e.id)).connectionStatus).to.equal('NEVER');
    expect((await t.admin.post(`/endpoint/${es[0].id}/connect`)).status).to.equal(204);
    expect((await get(es[0].id)).connectionStatus).to.equal('CONNECTED');
  });
});
