/**
 * `npm run bench -- rollout` (BENCH_ROLLOUT_ENDPOINTS=N): a rollout over N endpoints (100,000 by default)
 * of one organization, seeded through the store's bulk path, in three rings (1 %, 10 %, the
 * rest) with no soak, on an in-process service with a short poll. Agents are simulated below
 * the API: each pass reads every waiting upgrade, reports the versions in one bulk write and
 * marks the messages delivered. Reported: the seconds from creation until each ring was sent
 * (SOAKING) and judged (PASSED), the whole rollout's seconds, and the ring work's store
 * requests per endpoint (scan pages, bulks, multi-gets; the driver's own counter).
 */
import crypto from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { DocStore } from '../src/store/doc-store.js';
import type { StoreContext } from '../src/store/client.js';
import type { EndpointDoc } from '../src/resources/endpoints/model.js';
import type { CommandMessageDoc } from '../src/resources/commands/model.js';
import type { RolloutDoc } from '../src/resources/rollouts/model.js';

export interface RolloutBenchResult {
  endpoints: number;
  seedSeconds: number;
  rings: { percent: number; total: number; sentSeconds: number; judgedSeconds: number }[];
  totalSeconds: number;
  storeRequests: number;
  storeRequestsPerEndpoint: number;
  commandsCreated: number;
}

const ADMIN = `bench-admin-${crypto.randomBytes(12).toString('hex')}`;
const RINGS = [1, 10, 100];

/** Delivers every waiting upgrade of `orgId` and reports its version, in bulk; how many it answered. */
async function answerUpgrades(ctx: StoreContext, orgId: string): Promise<number> {
  const messages = new DocStore<CommandMessageDoc>(ctx, 'command-messages', 'command message');
  const endpoints = new DocStore<EndpointDoc>(ctx, 'endpoints', 'endpoint');
  await messages.refresh();
  let n = 0;
  const query = { bool: { filter: [{ term: { orgId } }, { term: { name: 'upgrade' } }, { term: { status: 'CREATED' } }] } };
  for await (const batch of messages.scan(query, { batchSize: 5000, sort: [{ id: 'asc' }] })) {
    const now = new Date().toISOString();
    await endpoints.bulk(batch.flatMap((m) => [{ update: { _id: m.doc.endpointId } }, { doc: { clientVersion: String(m.doc.payload.version), lastSeen: now } }]), { refresh: false });
    await messages.bulk(batch.flatMap((m) => [{ update: { _id: m.id } }, { doc: { status: 'SENT', updatedAt: now } }]), { refresh: false });
    n += batch.length;
  }
  return n;
}

export async function rolloutBench(opts: { esUrl: string; endpoints: number; log: (line: string) => void }): Promise<RolloutBenchResult> {
  const prefix = `ecs-benchrollout${crypto.randomBytes(3).toString('hex')}`;
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', ECS_INDEX_PREFIX: prefix, ECS_ADMIN_TOKEN: ADMIN, ECS_JOB_POLL_MS: '200', ECS_DEVELOPMENT: 'true', DATABASE_URL: 'pglite:memory' });
  const server = await startServer({ config, log: createLogger('warn'), elasticsearchUrl: opts.esUrl });
  await server.ready;
  try {
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${server.url}/endpoint-control-service/v1${path}`, {
        method,
        headers: { 'x-auth-token': ADMIN, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    const orgId = `bench-org-${crypto.randomBytes(3).toString('hex')}`;
    await api('POST', '/admin/organizations', { id: orgId, name: orgId });
    const seedStart = performance.now();
    const endpoints = new DocStore<EndpointDoc>(server.store, 'endpoints', 'endpoint');
    const who = { username: 'bench', authenticator: 'none' };
    for (let i = 0; i < opts.endpoints; i += 5000) {
      const now = new Date().toISOString();
      const docs: EndpointDoc[] = Array.from({ length: Math.min(5000, opts.endpoints - i) }, (_, k) => ({
        id: `bench-ep-${i + k}`,
        orgId,
        type: 'VC_ENDPOINT',
        connectionStatus: 'CONNECTED',
        hostInfo: { os: 'linux' },
        clientVersion: 'v1.0.0',
        createdAt: now,
        updatedAt: now,
        createdBy: who,
        updatedBy: who,
      }));
      await endpoints.bulk(docs.flatMap((d) => [{ create: { _id: d.id } }, d]), { refresh: false });
    }
    await endpoints.refresh();
    const seedSeconds = (performance.now() - seedStart) / 1000;
    opts.log(`seeded ${opts.endpoints} endpoints in ${seedSeconds.toFixed(1)} s`);

    const stats = server.handle.services.rollouts.work.stats;
    const before = { ...stats };
    const start = performance.now();
    const created = await api<{ id: string }>('POST', '/rollouts', {
      name: 'bench v1.1.0',
      orgId,
      targetVersion: { linux: 'v1.1.0' },
      rings: RINGS.map((percent) => ({ percent })),
      soakSeconds: 0,
      gate: { minHealthyPercent: 95, withinSeconds: 600 },
      autoRollback: false,
    });
    const rollouts = new DocStore<RolloutDoc>(server.store, 'rollouts', 'rollout');
    const sent: number[] = [];
    const judged: number[] = [];
    for (;;) {
      await answerUpgrades(server.store, orgId);
      const d = (await rollouts.get(created.id))?.doc;
      if (!d) throw new Error('rollout not found');
      const at = (performance.now() - start) / 1000;
      d.rings.forEach((r, i) => {
        if (sent[i] === undefined && (r.state === 'SOAKING' || r.state === 'PASSED' || r.state === 'FAILED')) sent[i] = at;
        if (judged[i] === undefined && (r.state === 'PASSED' || r.state === 'FAILED')) judged[i] = at;
      });
      if (d.state !== 'RUNNING') {
        if (d.state !== 'COMPLETED') throw new Error(`rollout ended ${d.state}: ${d.reason ?? ''}`);
        const totalSeconds = (performance.now() - start) / 1000;
        const storeRequests = stats.storeRequests - before.storeRequests;
        return {
          endpoints: opts.endpoints,
          seedSeconds,
          rings: d.rings.map((r, i) => ({ percent: RINGS[i], total: r.counts.total, sentSeconds: sent[i] ?? totalSeconds, judgedSeconds: judged[i] ?? totalSeconds })),
          totalSeconds,
          storeRequests,
          storeRequestsPerEndpoint: storeRequests / opts.endpoints,
          commandsCreated: stats.commandsCreated - before.commandsCreated,
        };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await server.close();
  }
}

export function rolloutTable(r: RolloutBenchResult): string {
  const rows = r.rings.map((g) => `| ${g.percent} % | ${g.total} | ${g.sentSeconds.toFixed(1)} | ${g.judgedSeconds.toFixed(1)} |`);
  return [
    `Rollout of ${r.endpoints} endpoints (seeded in ${r.seedSeconds.toFixed(1)} s): ${r.totalSeconds.toFixed(1)} s to COMPLETED; ring work ${r.storeRequests} store requests (${r.storeRequestsPerEndpoint.toFixed(4)} per endpoint), ${r.commandsCreated} commands`,
    '',
    '| ring | endpoints | sent at (s) | judged at (s) |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** Endpoints of the rollout scenario: BENCH_ROLLOUT_ENDPOINTS, else 10,000 with --quick and 100,000 otherwise. */
export function rolloutEndpoints(quick: boolean, env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.BENCH_ROLLOUT_ENDPOINTS);
  return Number.isInteger(n) && n > 0 ? n : quick ? 10_000 : 100_000;
}
