/**
 * Heartbeat retention: the heartbeats alias rolls over, whole generations whose
 * newest heartbeat is older than ECS_HEARTBEAT_RETENTION_DAYS are deleted (never the write
 * generation), reads span every generation, and of two instances only the lease holder acts.
 * Its own index prefix: the test rolls the heartbeats alias over and deletes generations.
 */
import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { ensureIndices } from '../../src/store/index-setup.js';
import { reindex } from '../../src/store/reindex.js';
import { createLogger } from '../../src/log.js';
import { ConflictError } from '../../src/errors.js';
import type { RetentionRun } from '../../src/resources/network/retention.js';

const DAY = 86_400_000;

describe('heartbeat retention', () => {
  const prefix = `${RUN_PREFIX}-zret`;
  const alias = `${prefix}-network-heartbeats`;
  let a: TestApp;
  let b: TestApp;
  let admin: Api;
  let reader: Api;
  let org: string;

  before(async function () {
    this.timeout(120_000);
    a = await startTestApp({ ECS_INDEX_PREFIX: prefix, ECS_HEARTBEAT_RETENTION_DAYS: '30' });
    b = await startTestApp({ ECS_INDEX_PREFIX: prefix, ECS_HEARTBEAT_RETENTION_DAYS: '30' });
    org = await a.world.org();
    admin = a.world.as(await a.world.token('admin', org));
    reader = b.world.as(await a.world.token('reader', org));
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  async function beat(endpointId: string, at: number): Promise<void> {
    const res = await admin.post('/network-heartbeat', {
      endpointId,
      orgId: org,
      externalAddress: '203.0.113.7',
      networkAddress: '10.20.0.0',
      hostAddress: '10.20.0.5',
      subnetMask: '255.255.255.0',
      defaultGateway: '10.20.0.1',
      operatingSystem: 'linux',
      pcapVersion: 'libpcap 1.10.4',
      timestamp: new Date(at).toISOString(),
    });
    expect(res.status, res.text).to.equal(201);
  }

  /** The heartbeats of a sensor as the API lists them (through instance B). */
  async function count(endpointId: string): Promise<number> {
    const res = await reader.get<{ totalCount: number }>(`/network-heartbeat/endpoint/${endpointId}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.totalCount;
  }

  /** Heartbeats are written without a refresh: wait until a search sees them. */
  async function visible(endpointId: string, n: number): Promise<void> {
    const w = await waitFor(() => count(endpointId), (c) => c === n, 10_000, 100);
    expect(w.value, `heartbeats of ${endpointId}`).to.equal(n);
  }

  async function generations(): Promise<{ index: string; write: boolean }[]> {
    const res = await a.server.store.client.indices.getAlias({ name: alias });
    return Object.entries(res)
      .map(([index, v]) => ({ index, write: v.aliases[alias]?.is_write_index === true }))
      .sort((x, y) => x.index.localeCompare(y.index));
  }

  it('deletes old generations, keeps recent heartbeats and the write generation; one of two maintainers acts', async function () {
    this.timeout(60_000);
    const now = Date.now();
    const old = uid('sensor-old');
    const recent = uid('sensor-new');
    await beat(old, now - 40 * DAY);
    await beat(old, now - 39 * DAY);
    await visible(old, 2);
    const [gen1] = await generations();

    // Two instances run the maintenance at once: exactly one takes the lease and acts.
    const runs: RetentionRun[] = await Promise.all([
      a.server.handle.services.heartbeatRetention.run(new Date(now), true),
      b.server.handle.services.heartbeatRetention.run(new Date(now), true),
    ]);
    expect(runs.map((r) => r.acted).sort()).to.deep.equal([false, true]);
    const winner = runs[0].acted ? a : b;
    const loser = winner === a ? b : a;
    const acted = runs.find((r) => r.acted) as RetentionRun;
    expect(acted.rolledOver).to.equal(true);
    // Generation 1 (newest heartbeat 39 days old) is gone; the new write generation stays, empty.
    expect(acted.deleted).to.deep.equal([gen1.index]);
    const afterFirst = await generations();
    expect(afterFirst).to.have.length(1);
    expect(afterFirst[0]).to.include({ write: true });
    expect(afterFirst[0].index).to.not.equal(gen1.index);
    expect(await count(old)).to.equal(0);

    // The loser skips while the lease is held ...
    expect((await loser.server.handle.services.heartbeatRetention.run(new Date(now))).acted).to.equal(false);

    // Recent and old heartbeats in the write generation: the write generation is never deleted.
    await beat(recent, now - 3600_000);
    await beat(old, now - 45 * DAY);
    await visible(recent, 1);
    await visible(old, 1);
    const second = await winner.server.handle.services.heartbeatRetention.run(new Date(now), true);
    expect(second).to.include({ acted: true, rolledOver: true });
    expect(second.deleted).to.deep.equal([]);
    const gens = await generations();
    expect(gens).to.have.length(2);
    expect(gens.map((g) => g.write)).to.deep.equal([false, true]);
    // Reads span both generations; the one with a recent heartbeat stays.
    expect(await count(recent)).to.equal(1);
    expect(await count(old)).to.equal(1);
    await beat(recent, now - 60_000);
    await visible(recent, 2);

    // ... and takes over once the holder's lease (three 5-minute intervals) has expired.
    const takeover = await loser.server.handle.services.heartbeatRetention.run(new Date(now + 16 * 60_000));
    expect(takeover).to.include({ acted: true, rolledOver: false });
    expect(takeover.deleted).to.deep.equal([]);
    expect((await winner.server.handle.services.heartbeatRetention.run(new Date(now + 16 * 60_000))).acted).to.equal(false);

    // 31 days on, the older generation's newest heartbeat (an hour old today) is past the
    // retention: it goes, with the 45-day-old one; the write generation stays.
    const later = await loser.server.handle.services.heartbeatRetention.run(new Date(now + 31 * DAY));
    expect(later.deleted).to.deep.equal([gens[0].index]);
    expect(await count(old)).to.equal(0);
    expect(await count(recent)).to.equal(1);
  });

  it('index set-up accepts the rolled-over alias; reindex refuses it with a clear message', async () => {
    await a.server.handle.services.heartbeatRetention.run(new Date(), true).then(async (r) => {
      if (!r.acted) await b.server.handle.services.heartbeatRetention.run(new Date(), true);
    });
    expect((await generations()).length).to.be.greaterThan(1);
    await ensureIndices(a.server.store, createLogger('silent'));
    expect((await generations()).filter((g) => g.write)).to.have.length(1);
    const err = await reindex(a.server.store, 'network-heartbeats', { force: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConflictError);
    expect((err as Error).message).to.match(/rollover-managed/);
  });
});
