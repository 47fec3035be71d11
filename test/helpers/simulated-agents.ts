/**
 * Simulated agents for rollout tests: each pass, every agent takes its new command messages
 * (as the socket gateway delivers them: SENT), and answers an `upgrade` by reporting the new
 * version (PATCH /endpoint/{id}/client-version/{version}) or, for a bad build, by not coming
 * back. Every upgrade an agent received is remembered, so a test can prove none came twice.
 */
import { expect } from 'chai';
import type { Api } from './http.js';
import { waitFor } from './wait.js';
import type { StoreContext } from '../../src/store/client.js';
import { DocStore } from '../../src/store/doc-store.js';
import type { CommandMessageDoc } from '../../src/resources/commands/model.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';

export interface ReceivedUpgrade {
  messageId: string;
  version: string;
  rolloutId: string;
}

/** What an agent does with an upgrade to `version`: report it (it came back), or stay silent (it did not). */
export type AgentBehaviour = (endpointId: string, version: string) => 'report' | 'silent';

interface Message {
  id: string;
  name: string;
  status: string;
  payload: { version?: string; rolloutId?: string };
}

/** Runs `fn` over `items`, `width` at a time. */
async function each<T>(items: T[], fn: (item: T) => Promise<void>, width = 16): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

export class SimulatedAgents {
  /** Endpoint id → the upgrades it received, in order. */
  readonly received = new Map<string, ReceivedUpgrade[]>();

  constructor(
    private readonly api: Api,
    readonly ids: string[],
    private behaviour: AgentBehaviour = () => 'report',
  ) {}

  /** Creates `n` connected linux agents of `orgId` running `version` (through the API, as an agent registers). */
  static async register(api: Api, orgId: string, n: number, version: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await api.post<{ id: string }>('/endpoint', { orgId, displayName: `agent-${i}`, clientVersion: version, hostInfo: { os: 'linux' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ids.push(res.body.id);
    }
    await each(ids, async (id) => {
      expect((await api.post(`/endpoint/${id}/connect`)).status).to.equal(204);
    });
    // Connected as searches see it (a rollout's scan decides who was online when its ring started).
    const seen = await waitFor(
      () => api.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId, connectionStatuses: ['CONNECTED'] }, pageRequest: { size: 1 } }),
      (r) => r.body.totalCount >= n,
      10_000,
    );
    expect(seen.met, JSON.stringify(seen.value.body)).to.equal(true);
    return ids;
  }

  behave(b: AgentBehaviour): void {
    this.behaviour = b;
  }

  /** One pass: every agent takes its waiting messages and answers its upgrades. */
  async pass(): Promise<void> {
    await each(this.ids, async (id) => {
      const res = await this.api.get<{ items: Message[] }>(`/command-message/endpoint/${id}?status=CREATED&size=100`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      for (const m of res.body.items) {
        expect((await this.api.patch(`/command-message/${m.id}/status/SENT`)).status).to.equal(200);
        if (m.name !== 'upgrade' || !m.payload.version) continue;
        const got = this.received.get(id) ?? [];
        got.push({ messageId: m.id, version: m.payload.version, rolloutId: m.payload.rolloutId ?? '' });
        this.received.set(id, got);
        if (this.behaviour(id, m.payload.version) === 'report') {
          expect((await this.api.patch(`/endpoint/${id}/client-version/${m.payload.version}`)).status).to.equal(204);
        }
      }
    });
  }

  /** The agents that received an upgrade to `version`. */
  upgradedTo(version: string): string[] {
    return [...this.received].filter(([, got]) => got.some((g) => g.version === version)).map(([id]) => id);
  }
}

/**
 * Agents simulated in bulk below the API, for fleets of thousands: one pass reads every waiting
 * upgrade of the organizations' agents, reports the versions in one bulk write of the
 * endpoints (as the group commit of agents' reports would) and marks the messages SENT.
 */
export class BulkSimulatedAgents {
  private messages: DocStore<CommandMessageDoc>;
  private endpoints: DocStore<EndpointDoc>;
  /** Endpoint id → upgrade messages received. */
  readonly received = new Map<string, number>();

  constructor(ctx: StoreContext, private readonly orgIds: string[]) {
    this.messages = new DocStore<CommandMessageDoc>(ctx, 'command-messages', 'command message');
    this.endpoints = new DocStore<EndpointDoc>(ctx, 'endpoints', 'endpoint');
  }

  /** Goes on through another instance's store client (the first one's instance was closed). */
  rebind(ctx: StoreContext): void {
    this.messages = new DocStore<CommandMessageDoc>(ctx, 'command-messages', 'command message');
    this.endpoints = new DocStore<EndpointDoc>(ctx, 'endpoints', 'endpoint');
  }

  async pass(): Promise<number> {
    await this.messages.refresh();
    let answered = 0;
    const query = { bool: { filter: [{ terms: { orgId: this.orgIds } }, { term: { name: 'upgrade' } }, { term: { status: 'CREATED' } }] } };
    for await (const batch of this.messages.scan(query, { batchSize: 1000, sort: [{ id: 'asc' }] })) {
      const now = new Date().toISOString();
      for (const m of batch) this.received.set(m.doc.endpointId, (this.received.get(m.doc.endpointId) ?? 0) + 1);
      const eps = await this.endpoints.bulk(
        batch.flatMap((m) => [{ update: { _id: m.doc.endpointId } }, { doc: { clientVersion: String(m.doc.payload.version), lastSeen: now } }]),
        { refresh: false },
      );
      expect(eps.errors, 'versions reported').to.equal(false);
      const sent = await this.messages.bulk(batch.flatMap((m) => [{ update: { _id: m.id } }, { doc: { status: 'SENT', updatedAt: now } }]), { refresh: false });
      expect(sent.errors, 'messages delivered').to.equal(false);
      answered += batch.length;
    }
    await this.messages.refresh();
    return answered;
  }
}
