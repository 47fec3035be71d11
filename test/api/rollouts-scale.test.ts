/**
 * A rollout over 10,000 endpoints (seeded through the store's bulk path) on two instances:
 * the instance driving it is closed mid-ring, the other takes over, and every endpoint is sent
 * exactly one upgrade command; the ring work costs far less than one store request per endpoint.
 */
import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { agentDoc, createEndpointDocs } from '../helpers/endpoint-store.js';
import { BulkSimulatedAgents } from '../helpers/simulated-agents.js';
import { waitFor } from '../helpers/wait.js';
import { DocStore } from '../../src/store/doc-store.js';
import type { RolloutDoc } from '../../src/resources/rollouts/model.js';
import type { CommandMessageDoc } from '../../src/resources/commands/model.js';

interface Rollout {
  id: string;
  state: string;
  rings: { state: string; counts: { total: number; upgraded: number; healthy: number; failed: number; pending: number } }[];
}

const ENDPOINTS = 10_000;
/** Both instances on one index prefix of their own (nobody else drives these rollouts). */
const ENV = { ECS_INDEX_PREFIX: `${RUN_PREFIX}-zrollscale`, ECS_JOB_POLL_MS: '100', ECS_JOB_LEASE_SECONDS: '3' };

describe('rollouts at scale on two instances: a pause on either, 10,000 endpoints, the driving instance closed mid-ring', function () {
  this.timeout(300_000);
  let a: TestApp;
  let b: TestApp;

  before(async () => {
    a = await startTestApp(ENV);
    b = await startTestApp(ENV);
  });
  after(async () => {
    await a?.close().catch(() => undefined);
    await b?.close();
  });

  it('a pause asked on the other instance stops the driver sending within a second', async () => {
    const org = await a.world.org();
    const docs = Array.from({ length: 5000 }, (_, i) => agentDoc(`${uid('pz')}-${i}`, org, { hostInfo: { os: 'linux' }, clientVersion: 'v1.0.0' }));
    await createEndpointDocs(a.server.store, docs);
    const messages = new DocStore<CommandMessageDoc>(a.server.store, 'command-messages', 'command message');
    const upgrades = async (): Promise<number> => {
      await messages.refresh();
      return messages.count({ bool: { filter: [{ term: { orgId: org } }, { term: { name: 'upgrade' } }] } });
    };
    const created = await a.admin.post<Rollout>('/rollouts', {
      name: 'paused mid-ring',
      orgId: org,
      targetVersion: { linux: 'v1.1.0' },
      rings: [{ percent: 100 }],
      soakSeconds: 600,
      gate: { minHealthyPercent: 95, withinSeconds: 600 },
      autoRollback: false,
    });
    expect(created.status).to.equal(201);
    const rollouts = new DocStore<RolloutDoc>(a.server.store, 'rollouts', 'rollout');
    const driven = await waitFor(() => rollouts.get(created.body.id), (h) => h?.doc.leaseHolder !== undefined, 30_000, 10);
    expect(driven.met).to.equal(true);
    const other = driven.value?.doc.leaseHolder === a.server.handle.services.rollouts.driver.holder ? b : a;
    const paused = await other.admin.post<Rollout>(`/rollouts/${created.body.id}/pause`);
    expect(paused.status).to.equal(200);
    const pausedAt = performance.now();
    // Whatever was sent by then, nothing more is sent a second after the pause was answered.
    const settled = await waitFor(async () => performance.now() - pausedAt, (ms) => ms >= 1000, 5000, 50);
    expect(settled.met).to.equal(true);
    const afterOneSecond = await upgrades();
    const later = await waitFor(async () => performance.now() - pausedAt, (ms) => ms >= 3000, 5000, 100);
    expect(later.met).to.equal(true);
    expect(await upgrades(), 'no upgrade sent after the pause took effect').to.equal(afterOneSecond);
    expect(afterOneSecond, 'the pause came mid-ring').to.be.below(5000);
    expect((await a.admin.get<Rollout>(`/rollouts/${created.body.id}`)).body.state).to.equal('PAUSED');
  });

  it('rolls 10,000 endpoints out in two rings; another instance takes over mid-ring and sends nothing twice', async () => {
    const org = await a.world.org();
    const docs = Array.from({ length: ENDPOINTS }, (_, i) =>
      agentDoc(`${uid('ep')}-${i}`, org, { hostInfo: { os: 'linux' }, clientVersion: 'v1.0.0' }),
    );
    for (let i = 0; i < docs.length; i += 5000) await createEndpointDocs(a.server.store, docs.slice(i, i + 5000));
    const agents = new BulkSimulatedAgents(a.server.store, [org]);
    const created = await a.admin.post<Rollout>('/rollouts', {
      name: 'agent v1.1.0',
      orgId: org,
      targetVersion: { linux: 'v1.1.0' },
      rings: [{ percent: 5 }, { percent: 100 }],
      soakSeconds: 0,
      gate: { minHealthyPercent: 95, withinSeconds: 120 },
      autoRollback: false,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id;
    const rollouts = new DocStore<RolloutDoc>(a.server.store, 'rollouts', 'rollout');

    // The second ring is being sent: close whichever instance drives it.
    const midRing = await waitFor(
      async () => {
        await agents.pass();
        return (await rollouts.get(id))?.doc;
      },
      (d) => d !== undefined && d.currentRing === 1 && d.rings[1].state === 'UPGRADING' && d.leaseHolder !== undefined,
      120_000,
      20,
    );
    expect(midRing.met, JSON.stringify(midRing.value?.rings)).to.equal(true);
    const driving = midRing.value?.leaseHolder === a.server.handle.services.rollouts.driver.holder ? a : b;
    const survivor = driving === a ? b : a;
    await driving.close();
    agents.rebind(survivor.server.store);

    const done = await waitFor(
      async () => {
        await agents.pass();
        const res = await survivor.admin.get<Rollout>(`/rollouts/${id}`);
        expect(res.status).to.equal(200);
        return res.body;
      },
      (r) => r.state === 'COMPLETED',
      180_000,
      100,
    );
    expect(done.met, JSON.stringify(done.value)).to.equal(true);
    const [canary, rest] = done.value.rings;
    expect(canary.counts.total + rest.counts.total).to.equal(ENDPOINTS);
    // 5 % by the stable hash, within a wide margin of chance.
    expect(canary.counts.total).to.be.within(350, 650);
    // The ring passes once 95 % of it is healthy (the gate), so the last agents may still be pending then.
    expect(rest.counts.failed).to.equal(0);
    expect(rest.counts.healthy + rest.counts.pending).to.equal(rest.counts.total);
    expect(rest.counts.healthy).to.be.at.least(Math.ceil(0.95 * rest.counts.total));
    await agents.pass();
    // Every endpoint received exactly one upgrade command, whichever instance sent it.
    expect(agents.received.size).to.equal(ENDPOINTS);
    expect([...agents.received.values()].every((n) => n === 1)).to.equal(true);
    const work = survivor.server.handle.services.rollouts.work.stats;
    expect(work.storeRequests / ENDPOINTS, JSON.stringify(work)).to.be.below(0.5);
  });
});
