/**
 * Agent-version rollouts in rings, with simulated agents that answer the upgrade command by
 * reporting the new version or by not coming back: rings pass one after the other, a bad build
 * halts at the canary ring and is rolled back, maintenance windows hold a customer, and
 * another customer's admin neither sees nor touches a rollout.
 */
import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';
import type { Api } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { SimulatedAgents } from '../helpers/simulated-agents.js';
import { hashBucket, windowOpen } from '../../src/resources/rollouts/rings.js';

interface Ring {
  orgIds?: string[];
  percent?: number;
  state: string;
  counts: { total: number; upgraded: number; healthy: number; failed: number; pending: number };
  startedAt?: string;
  sentAt?: string;
  judgedAt?: string;
}
interface Rollout {
  id: string;
  state: string;
  rings: Ring[];
  currentRing: number;
  reason?: string;
  version: number;
}

/** Short polls and leases; an index prefix of its own, so only this file's instance drives its rollouts. */
const ENV = { ECS_INDEX_PREFIX: `${RUN_PREFIX}-zroll`, ECS_JOB_POLL_MS: '100', ECS_JOB_LEASE_SECONDS: '3' };
const OLD = 'v1.0.0';
const NEW = 'v1.1.0';

function rolloutBody(orgId: string, rings: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `agent ${NEW}`,
    orgId,
    targetVersion: { linux: NEW, windows: NEW },
    rings,
    soakSeconds: 1,
    gate: { minHealthyPercent: 90, withinSeconds: 3 },
    autoRollback: true,
    ...extra,
  };
}

describe('rollouts: an agent version in rings', function () {
  this.timeout(120_000);
  let t: TestApp;
  let admin: Api;

  before(async () => {
    t = await startTestApp(ENV);
    admin = t.admin;
  });
  after(() => t?.close());

  /** The rollout's audit trail, once it holds `n` state changes (events are searchable after the store's refresh). */
  async function trailOf(id: string, until: (ops: string[]) => boolean): Promise<{ reason?: string; operation: string; details?: { to?: string } }[]> {
    const w = await waitFor(
      async () => {
        const res = await admin.post<{ items: { reason?: string; operation: string; details?: { to?: string } }[] }>('/audit/search-page', {
          criteria: { targetType: 'rollout', targetId: id },
          pageRequest: { size: 50 },
        });
        expect(res.status).to.equal(200);
        return res.body.items;
      },
      (items) => until(items.map((e) => e.operation)),
      10_000,
    );
    expect(w.met, JSON.stringify(w.value)).to.equal(true);
    return w.value;
  }

  async function create(api: Api, body: Record<string, unknown>): Promise<Rollout> {
    const res = await api.post<Rollout>('/rollouts', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  async function read(id: string): Promise<Rollout> {
    const res = await admin.get<Rollout>(`/rollouts/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  /** Agents answer and the rollout is read, until `done` holds. */
  async function drive(agents: SimulatedAgents, id: string, done: (r: Rollout) => boolean, check?: (r: Rollout) => void): Promise<Rollout> {
    const w = await waitFor(
      async () => {
        await agents.pass();
        const r = await read(id);
        check?.(r);
        return r;
      },
      done,
      60_000,
      50,
    );
    expect(w.met, `rollout reached the expected state: ${JSON.stringify(w.value)}`).to.equal(true);
    return w.value;
  }

  it('a three-ring rollout passes ring by ring: test organization, half of the rest by a stable hash, then everything; pins follow', async () => {
    const msp = await t.world.org();
    const [testOrg, custA, custB] = [await t.world.org(msp), await t.world.org(msp), await t.world.org(msp)];
    const canary = await SimulatedAgents.register(admin, testOrg, 3, OLD);
    const rest = [...(await SimulatedAgents.register(admin, custA, 8, OLD)), ...(await SimulatedAgents.register(admin, custB, 8, OLD))];
    // Customers of one agent each, until one's agent falls in the 50 % ring: the last ring has
    // nothing to send there, and pins that organization all the same.
    const single: { org: string; agent: string }[] = [];
    const oneInHalf = (): boolean => single.some((s) => hashBucket(s.agent) < 5000);
    for (let tries = 0; tries < 40 && !oneInHalf(); tries++) {
      const org = await t.world.org(msp);
      const [agent] = await SimulatedAgents.register(admin, org, 1, OLD);
      single.push({ org, agent });
      rest.push(agent);
    }
    expect(oneInHalf(), 'a customer whose agents are all in the 50 % ring').to.equal(true);
    const agents = new SimulatedAgents(admin, [...canary, ...rest]);
    const ro = await create(admin, rolloutBody(msp, [{ orgIds: [testOrg] }, { percent: 50 }, { percent: 100 }], { gate: { minHealthyPercent: 100, withinSeconds: 20 } }));
    expect(ro.state).to.equal('RUNNING');
    expect(ro.rings.map((r) => r.state)).to.deep.equal(['PENDING', 'PENDING', 'PENDING']);

    const done = await drive(agents, ro.id, (r) => r.state === 'COMPLETED', (r) => {
      // A ring starts only once the one before it passed its gate.
      for (let i = 1; i < r.rings.length; i++) {
        if (r.rings[i].state !== 'PENDING') expect(r.rings[i - 1].state, JSON.stringify(r.rings)).to.equal('PASSED');
      }
    });
    expect(done.rings.map((r) => r.state)).to.deep.equal(['PASSED', 'PASSED', 'PASSED']);
    const half = rest.filter((id) => hashBucket(id) < 5000);
    expect(done.rings.map((r) => r.counts.total)).to.deep.equal([3, half.length, rest.length - half.length]);
    for (const r of done.rings) expect(r.counts).to.include({ upgraded: r.counts.total, healthy: r.counts.total, failed: 0, pending: 0 });
    expect(Date.parse(done.rings[1].startedAt ?? '')).to.be.at.least(Date.parse(done.rings[0].judgedAt ?? ''));
    // Every agent got exactly one upgrade command, to the new version.
    for (const id of [...canary, ...rest]) expect(agents.received.get(id)?.map((g) => g.version), id).to.deep.equal([NEW]);
    // The organization ring's organization and, with the last ring, every organization are pinned to the new version.
    for (const org of [testOrg, custA, custB, ...single.map((s) => s.org)]) {
      const pins = await admin.get<{ targetVersionLinux?: string; targetVersionWindows?: string }>(`/org-config/${org}`);
      expect(pins.body.targetVersionLinux, org).to.equal(NEW);
    }
    const trail = await trailOf(ro.id, (ops) => ops.includes('rolloutCompleted'));
    const reasons = trail.map((e) => e.reason ?? '');
    expect(reasons.some((r) => /^ring 1: 100 % healthy of 3, gate 100 %/.test(r)), reasons.join('\n')).to.equal(true);
    expect(trail.filter((e) => e.operation === 'rolloutRingPassed')).to.have.length(2);
  });

  it('a bad build halts at the canary ring and rolls back: the previous version sent to the canary, pins restored, nothing sent beyond; an agent away is pending', async () => {
    const msp = await t.world.org();
    const [canaryOrg, cust] = [await t.world.org(msp), await t.world.org(msp)];
    expect((await admin.put(`/org-config/${canaryOrg}/target-version`, { linux: OLD, mac: '', windows: '' })).status).to.equal(200);
    const canary = await SimulatedAgents.register(admin, canaryOrg, 4, OLD);
    const others = await SimulatedAgents.register(admin, cust, 5, OLD);
    // One canary agent is away when its ring starts: pending, never failed for it.
    expect((await admin.post(`/endpoint/${canary[3]}/disconnect`)).status).to.equal(204);
    const away = await waitFor(
      () => admin.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId: canaryOrg, connectionStatuses: ['CONNECTED'] }, pageRequest: { size: 1 } }),
      (r) => r.body.totalCount === 3,
      10_000,
    );
    expect(away.met).to.equal(true);
    // The new build never comes back; the old one does.
    const agents = new SimulatedAgents(admin, [...canary, ...others], (_id, version) => (version === NEW ? 'silent' : 'report'));
    const ro = await create(admin, rolloutBody(msp, [{ orgIds: [canaryOrg] }, { percent: 100 }], { gate: { minHealthyPercent: 90, withinSeconds: 2 } }));

    const done = await drive(agents, ro.id, (r) => r.state === 'ROLLED_BACK');
    expect(done.rings[0].state).to.equal('FAILED');
    expect(done.rings[0].counts).to.include({ total: 4, failed: 3, healthy: 0, pending: 1 });
    expect(done.rings[1].state).to.equal('PENDING');
    expect(done.reason).to.match(/ring 1: 0 % healthy of 3, gate 90 %/);
    await agents.pass();
    for (const id of canary) expect(agents.received.get(id)?.map((g) => g.version), id).to.deep.equal([NEW, OLD]);
    for (const id of others) expect(agents.received.get(id), id).to.equal(undefined);
    const pins = await admin.get<{ targetVersionLinux?: string }>(`/org-config/${canaryOrg}`);
    expect(pins.body.targetVersionLinux).to.equal(OLD);
    const trail = await trailOf(ro.id, (ops) => ops.includes('rolloutRolledBack'));
    expect(trail.map((e) => e.details?.to)).to.include.members(['ROLLING_BACK', 'ROLLED_BACK']);
    expect(trail.find((e) => e.operation === 'rolloutHalted')?.reason).to.match(/^ring 1: 0 % healthy of 3, gate 90 %/);
  });

  it('a maintenance window holds a customer until it opens, in the customer’s own time zone', async () => {
    const msp = await t.world.org();
    const [open, held] = [await t.world.org(msp), await t.world.org(msp)];
    const openIds = await SimulatedAgents.register(admin, open, 3, OLD);
    const heldIds = await SimulatedAgents.register(admin, held, 3, OLD);
    const agents = new SimulatedAgents(admin, [...openIds, ...heldIds]);
    const driver = t.server.handle.services.rollouts.driver;
    // Wednesday 10:00 UTC is 19:00 in Tokyo: the held customer's window (22:00–23:00 there) is closed.
    driver.clock = () => new Date('2026-11-25T10:00:00Z');
    try {
      const windows = [{ orgId: held, days: ['WED'], start: '22:00', end: '23:00', timeZone: 'Asia/Tokyo' }];
      const ro = await create(admin, rolloutBody(msp, [{ percent: 100 }], { windows, gate: { minHealthyPercent: 100, withinSeconds: 20 } }));
      const waiting = await drive(agents, ro.id, (r) => r.rings[0].counts.upgraded === 3 && r.rings[0].counts.pending === 3);
      expect(waiting.rings[0].state).to.equal('UPGRADING');
      expect(agents.upgradedTo(NEW).sort()).to.deep.equal([...openIds].sort());
      // 13:30 UTC is 22:30 in Tokyo: the window is open.
      driver.clock = () => new Date('2026-11-25T13:30:00Z');
      const done = await drive(agents, ro.id, (r) => r.state === 'COMPLETED');
      expect(done.rings[0].counts).to.include({ total: 6, healthy: 6 });
      expect(agents.upgradedTo(NEW).sort()).to.deep.equal([...openIds, ...heldIds].sort());
    } finally {
      driver.clock = () => new Date();
    }
  });

  it('an agent that has not reported its OS gets the version when the rollout names one for every OS, and nothing when they differ', async () => {
    const org = await t.world.org();
    const res = await admin.post<{ id: string }>('/endpoint', { orgId: org, displayName: 'no-os', clientVersion: OLD });
    expect(res.status).to.equal(200);
    expect((await admin.post(`/endpoint/${res.body.id}/connect`)).status).to.equal(204);
    const online = await waitFor(
      () => admin.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId: org, connectionStatuses: ['CONNECTED'] }, pageRequest: { size: 1 } }),
      (r) => r.body.totalCount === 1,
      10_000,
    );
    expect(online.met).to.equal(true);
    const agents = new SimulatedAgents(admin, [res.body.id]);
    const same = await create(admin, rolloutBody(org, [{ percent: 100 }], { soakSeconds: 0 }));
    const done = await drive(agents, same.id, (r) => r.state === 'COMPLETED');
    expect(done.rings[0].counts).to.include({ total: 1, upgraded: 1 });
    const differ = await create(admin, rolloutBody(org, [{ percent: 100 }], { soakSeconds: 0, targetVersion: { linux: 'v2.0.0', windows: 'v2.0.1' } }));
    const none = await drive(agents, differ.id, (r) => r.state === 'COMPLETED');
    expect(none.rings[0].counts.total).to.equal(0);
  });

  it('an agent holding the agent channel gets its upgrade command through it at once', async () => {
    const org = await t.world.org();
    const [id] = await SimulatedAgents.register(admin, org, 1, OLD);
    const agent = t.world.as(await t.world.token('agent', org, id));
    const held = agent.get<{ name: string; payload: { version: string; rolloutId: string } }[]>('/agent/channel?wait=30');
    const ro = await create(admin, rolloutBody(org, [{ percent: 100 }], { soakSeconds: 600 }));
    const answer = await held;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.map((m) => m.name)).to.deep.equal(['upgrade']);
    expect(answer.body[0].payload).to.deep.equal({ version: NEW, rolloutId: ro.id });
    expect((await agent.patch(`/endpoint/${id}/client-version/${NEW}`)).status).to.equal(204);
    const r = await waitFor(() => read(ro.id), (x) => x.rings[0].counts.healthy === 1, 20_000, 50);
    expect(r.met, JSON.stringify(r.value)).to.equal(true);
    expect((await admin.post(`/rollouts/${ro.id}/abort`)).status).to.equal(200);
  });

  it('a window past midnight is open on the next morning of its day, and closed outside it', () => {
    const w = { orgId: 'o', days: ['FRI' as const], start: '23:00', end: '02:00', timeZone: 'Europe/Berlin' };
    expect(windowOpen(w, new Date('2026-11-27T22:30:00Z'))).to.equal(true); // Fri 23:30 Berlin
    expect(windowOpen(w, new Date('2026-11-28T00:30:00Z'))).to.equal(true); // Sat 01:30 Berlin
    expect(windowOpen(w, new Date('2026-11-28T01:30:00Z'))).to.equal(false); // Sat 02:30 Berlin
    expect(windowOpen(w, new Date('2026-11-26T22:30:00Z'))).to.equal(false); // Thu 23:30 Berlin
  });

  it('pause stops sending at once and resume continues; abort ends it', async () => {
    const msp = await t.world.org();
    const ids = await SimulatedAgents.register(admin, msp, 2, OLD);
    const agents = new SimulatedAgents(admin, ids);
    const ro = await create(admin, rolloutBody(msp, [{ percent: 100 }], { soakSeconds: 600 }));
    const paused = await admin.post<Rollout>(`/rollouts/${ro.id}/pause`);
    expect(paused.status).to.equal(200);
    expect(paused.body.state).to.equal('PAUSED');
    expect((await admin.post<Rollout>(`/rollouts/${ro.id}/pause`)).body.state, 'pausing a paused rollout answers it').to.equal('PAUSED');
    const resumed = await admin.post<Rollout>(`/rollouts/${ro.id}/resume`);
    expect(resumed.body.state).to.equal('RUNNING');
    await drive(agents, ro.id, (r) => r.rings[0].state === 'SOAKING' && r.rings[0].counts.healthy === 2);
    const aborted = await admin.post<Rollout>(`/rollouts/${ro.id}/abort`);
    expect(aborted.body.state).to.equal('ABORTED');
    const again = await admin.post<{ status: number }>(`/rollouts/${ro.id}/pause`);
    expect(again.status).to.equal(409);
  });

  it('another customer’s admin neither sees nor touches a rollout; a reader sees it but cannot move it', async () => {
    const { orgA, orgB, adminA, readerA, adminB } = await t.world.tenants();
    await SimulatedAgents.register(admin, orgA, 1, OLD);
    const ro = await create(adminA, rolloutBody(orgA, [{ percent: 100 }], { soakSeconds: 600 }));
    expect((await adminB.get(`/rollouts/${ro.id}`)).status).to.equal(403);
    expect((await adminB.post(`/rollouts/${ro.id}/pause`)).status).to.equal(403);
    expect((await adminB.post(`/rollouts/${ro.id}/rollback`)).status).to.equal(403);
    const listB = await adminB.post<{ items: Rollout[] }>('/rollouts/page-search', { criteria: {}, pageRequest: {} });
    expect(listB.status).to.equal(200);
    expect(listB.body.items.map((r) => r.id)).not.to.include(ro.id);
    expect((await adminB.post('/rollouts', rolloutBody(orgA, [{ percent: 100 }]))).status).to.equal(403);
    expect((await adminA.post('/rollouts', rolloutBody(orgA, [{ orgIds: [orgB] }]))).status).to.equal(400);
    expect((await readerA.get(`/rollouts/${ro.id}`)).status).to.equal(200);
    expect((await readerA.post(`/rollouts/${ro.id}/abort`)).status).to.equal(403);
    const listA = await adminA.post<{ items: Rollout[] }>('/rollouts/page-search', { criteria: { orgId: orgA }, pageRequest: {} });
    expect(listA.body.items.map((r) => r.id)).to.include(ro.id);
    expect((await adminA.post(`/rollouts/${ro.id}/abort`)).status).to.equal(200);
  });

  it('an agent reports its version with its own token only, as a v-prefixed semantic version', async () => {
    const org = await t.world.org();
    const [mine, other] = await SimulatedAgents.register(admin, org, 2, OLD);
    const agent = t.world.as(await t.world.token('agent', org, mine));
    expect((await agent.patch(`/endpoint/${mine}/client-version/v2.0.1`)).status).to.equal(204);
    expect((await t.world.endpointRecord(mine)).clientVersion).to.equal('v2.0.1');
    expect((await agent.patch(`/endpoint/${other}/client-version/v2.0.1`)).status).to.equal(403);
    expect((await agent.patch(`/endpoint/${mine}/client-version/2.0.1`)).status).to.equal(400);
    expect((await agent.patch(`/endpoint/${mine}/client-version/vlatest`)).status).to.equal(400);
  });

  it('refuses rings and windows it cannot follow (400)', async () => {
    const org = await t.world.org();
    const bad = [
      rolloutBody(org, []),
      rolloutBody(org, [{ percent: 0 }]),
      rolloutBody(org, [{ percent: 100 }], { targetVersion: {} }),
      rolloutBody(org, [{ percent: 100 }], { targetVersion: { linux: '1.2.3' } }),
      rolloutBody(org, [{ percent: 100 }], { windows: [{ orgId: org, days: ['MON'], start: '01:00', end: '02:00', timeZone: 'Mars/Olympus' }] }),
      rolloutBody(org, [{ percent: 100 }], { windows: [{ orgId: org, days: ['MON'], start: '25:00', end: '02:00', timeZone: 'UTC' }] }),
    ];
    for (const body of bad) expect((await admin.post('/rollouts', body)).status, JSON.stringify(body)).to.equal(400);
  });
});
