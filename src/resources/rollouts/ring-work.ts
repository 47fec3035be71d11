/**
 * The bulk work of a ring, endpoint by endpoint but never one request per endpoint: the
 * fleet is scanned in batches (one point in time), a ring's targets are created and updated
 * in bulk, its upgrade commands are queued in one bulk request per batch, and judging reads
 * endpoints and command statuses with one multi-get each per batch.
 *
 * Every command has an id derived from the rollout, the ring, the endpoint and what it does
 * (upgrade or rollback): a driver that replays a batch after a crash meets the commands it
 * sent before, and nothing is sent twice.
 */
import crypto from 'node:crypto';
import type { Query } from '../../store/doc-store.js';
import type { UserKey } from '../../domain.js';
import type { FleetAgent } from '../endpoints/agent-scan.js';
import type { BatchMessage } from '../commands/batch.js';
import type { EffectiveCommandMessageStatus } from '../commands/model.js';
import { catalogueOsOf } from '../commands/catalogue.js';
import { addOutcome, emptyTally, outcomeOf, sameVersion, type RingTally } from './judge.js';
import { mayUpgrade, ringOf } from './rings.js';
import { ROLLOUT_OS, type RolloutDoc, type RolloutTargetDoc } from './model.js';
import { targetId, type RolloutTargetStore } from './store.js';

/** What a ring's work needs of the other resources (their services). */
export interface RingWorkDeps {
  agents: {
    scanFleet(scope: Query | undefined, batchSize: number): AsyncGenerator<FleetAgent[]>;
    readFleet(ids: string[]): Promise<FleetAgent[]>;
  };
  commands: {
    enqueueMany(items: BatchMessage[], by: UserKey): Promise<string[]>;
    statuses(ids: string[]): Promise<Map<string, EffectiveCommandMessageStatus>>;
  };
  orgs: {
    subtreeQuery(orgId: string, field: string): Promise<Query>;
    pathOf(orgId: string): Promise<string[]>;
  };
}

/** Store work done so far (the bench reports it per endpoint). */
export interface RingWorkStats {
  /** Requests to the store made by ring work (scan pages, bulks, multi-gets). */
  storeRequests: number;
  /** Commands created (a replay that met an existing command does not count). */
  commandsCreated: number;
}

/** The id of the command a rollout sends an endpoint in a ring: the same on every replay. */
export function rolloutCommandId(rolloutId: string, ring: number, endpointId: string, what: 'upgrade' | 'rollback'): string {
  const h = crypto.createHash('sha256').update(`rollout\n${rolloutId}\n${ring}\n${endpointId}\n${what}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** True when the driver must stop what it is doing (paused, aborted, lease lost, instance stopping). */
export type StopCheck = () => Promise<boolean>;

export class RingWork {
  readonly stats: RingWorkStats = { storeRequests: 0, commandsCreated: 0 };
  private readonly paths = new Map<string, string[]>();

  constructor(
    private readonly targets: RolloutTargetStore,
    private readonly deps: RingWorkDeps,
    private readonly batchSize: number,
  ) {}

  private async pathOf(orgId: string): Promise<string[]> {
    let p = this.paths.get(orgId);
    if (!p) {
      p = await this.deps.orgs.pathOf(orgId);
      if (this.paths.size > 100_000) this.paths.clear();
      this.paths.set(orgId, p);
    }
    return p;
  }

  /**
   * Creates the targets of ring `ring`: every agent of the rollout's subtree that the ring
   * takes and whose OS has a target version, HELD until sent. With them, every organization
   * that has an agent in the subtree.
   */
  async createTargets(d: RolloutDoc, ring: number): Promise<{ total: number; fleetOrgIds: string[] }> {
    const specs = d.rings.map((r) => (r.orgIds ? { orgIds: r.orgIds } : { percent: r.percent ?? 100 }));
    const scope = await this.deps.orgs.subtreeQuery(d.orgId, 'orgId');
    const orgIds = new Set<string>();
    let total = 0;
    for await (const batch of this.deps.agents.scanFleet(scope, this.batchSize)) {
      this.stats.storeRequests++;
      const docs: RolloutTargetDoc[] = [];
      for (const a of batch) {
        // Every organization with an agent in the rollout's scope, whichever ring its agents fall in:
        // a ring that reaches 100 % pins them all, even one whose agents all went in earlier rings.
        orgIds.add(a.orgId);
        if (ringOf(specs, a.id, await this.pathOf(a.orgId)) !== ring) continue;
        // An agent that has not reported its OS gets the target version when the rollout names one version for every OS it upgrades.
        const given = ROLLOUT_OS.filter((o) => d.targetVersion[o]);
        const os = catalogueOsOf(a.host) ?? (new Set(given.map((o) => d.targetVersion[o])).size === 1 ? given[0] : undefined);
        const to = os ? d.targetVersion[os] : undefined;
        if (!os || !to) continue;
        docs.push({
          id: targetId(d.id, a.id),
          rolloutId: d.id,
          endpointId: a.id,
          orgId: a.orgId,
          ring,
          os,
          fromVersion: a.clientVersion ?? '',
          toVersion: to,
          offlineAtStart: a.connectionStatus !== 'CONNECTED',
          state: 'HELD',
        });
      }
      if (docs.length > 0) {
        this.stats.storeRequests++;
        await this.targets.createMany(docs);
      }
      total += docs.length;
    }
    await this.targets.visible();
    return { total, fleetOrgIds: [...orgIds] };
  }

  /**
   * Sends the ring's HELD targets whose maintenance window is open at `at` their upgrade
   * command, batch by batch, then marks them SENT. How many are still held; `stopped` when
   * `stop` said so between batches (the rest is sent by whoever drives the rollout next).
   */
  async sendDue(d: RolloutDoc, ring: number, at: Date, stop: StopCheck): Promise<{ sent: number; held: number; stopped: boolean }> {
    let sent = 0;
    let held = 0;
    for await (const batch of this.targets.scan(d.id, { ring, state: 'HELD', batchSize: this.batchSize })) {
      this.stats.storeRequests++;
      if (await stop()) return { sent, held, stopped: true };
      const due: RolloutTargetDoc[] = [];
      for (const { doc: t } of batch) {
        if (mayUpgrade(d.windows, await this.pathOf(t.orgId), at)) due.push(t);
        else held++;
      }
      const items: BatchMessage[] = due
        .filter((t) => !sameVersion(t.fromVersion, t.toVersion))
        .map((t) => ({
          id: rolloutCommandId(d.id, ring, t.endpointId, 'upgrade'),
          endpointId: t.endpointId,
          orgId: t.orgId,
          message: { module: 'cmd', name: 'upgrade', payload: { version: t.toVersion, rolloutId: d.id } },
        }));
      // Taken before the commands exist: an agent that answers at once is seen after it.
      const sentAt = new Date().toISOString();
      if (items.length > 0) {
        this.stats.storeRequests++;
        this.stats.commandsCreated += (await this.deps.commands.enqueueMany(items, d.createdBy)).length;
      }
      if (due.length > 0) {
        this.stats.storeRequests++;
        await this.targets.updateMany(due.map((t) => ({ id: t.id, partial: { state: 'SENT', sentAt } })));
      }
      sent += due.length;
    }
    await this.targets.visible();
    return { sent, held, stopped: false };
  }

  /** Where ring `ring` stands now: every target judged (judge.ts), its endpoints and commands read in bulk. */
  async judge(d: RolloutDoc, ring: number, now: number): Promise<RingTally> {
    const tally = emptyTally();
    for await (const batch of this.targets.scan(d.id, { ring, batchSize: this.batchSize })) {
      const docs = batch.map((b) => b.doc);
      const sentIds = docs.filter((t) => t.state === 'SENT').map((t) => rolloutCommandId(d.id, ring, t.endpointId, 'upgrade'));
      const [agents, statuses] = await Promise.all([
        this.deps.agents.readFleet(docs.map((t) => t.endpointId)),
        this.deps.commands.statuses(sentIds),
      ]);
      this.stats.storeRequests += 3;
      const byId = new Map(agents.map((a) => [a.id, a]));
      for (const t of docs) {
        const status = t.state === 'SENT' ? statuses.get(rolloutCommandId(d.id, ring, t.endpointId, 'upgrade')) : undefined;
        addOutcome(tally, outcomeOf(t, byId.get(t.endpointId), status, d.gate, now));
      }
    }
    return tally;
  }

  /**
   * Sends the previous version back to every endpoint the rollout sent its upgrade (in rings
   * up to `lastRing`) and marks them rolled back. How many were sent; `stopped` as for sendDue.
   */
  async rollback(d: RolloutDoc, lastRing: number, stop: StopCheck): Promise<{ sent: number; stopped: boolean }> {
    let sent = 0;
    for (let ring = 0; ring <= lastRing; ring++) {
      for await (const batch of this.targets.scan(d.id, { ring, state: 'SENT', batchSize: this.batchSize })) {
        this.stats.storeRequests++;
        if (await stop()) return { sent, stopped: true };
        const todo = batch.map((b) => b.doc).filter((t) => !t.rolledBack);
        const items: BatchMessage[] = todo
          .filter((t) => t.fromVersion !== '' && !sameVersion(t.fromVersion, t.toVersion))
          .map((t) => ({
            id: rolloutCommandId(d.id, ring, t.endpointId, 'rollback'),
            endpointId: t.endpointId,
            orgId: t.orgId,
            message: { module: 'cmd', name: 'upgrade', payload: { version: t.fromVersion, rolloutId: d.id } },
          }));
        if (items.length > 0) {
          this.stats.storeRequests++;
          this.stats.commandsCreated += (await this.deps.commands.enqueueMany(items, d.createdBy)).length;
        }
        if (todo.length > 0) {
          this.stats.storeRequests++;
          await this.targets.updateMany(todo.map((t) => ({ id: t.id, partial: { rolledBack: true } })));
        }
        sent += items.length;
      }
    }
    await this.targets.visible();
    return { sent, stopped: false };
  }
}
