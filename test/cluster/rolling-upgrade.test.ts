/**
 * A rolling upgrade (`npm run test:cluster`, minutes): the previous release (package.json →
 * config.previousRelease, built from its commit by test/helpers/previous-release.ts) serves
 * under load, an instance of this release joins the same store and prefix, brings the schema
 * to its versions — the jobs index, whose mapping changed in a way Elasticsearch refuses in
 * place, is reindexed into its next generation while both serve — and the old instance is
 * restarted in the middle (it puts its older templates back at start). Asserted: both keep
 * serving (only 2xx, 503 with Retry-After, or a declared 409), the templates end at this
 * release's versions, and every acknowledged write is read back through both instances.
 */
import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { ADMIN_TOKEN, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { Api, type ApiResponse } from '../helpers/http.js';
import {
  buildPreviousRelease,
  startRelease,
  type PreviousRelease,
  type ReleaseInstance,
} from '../helpers/previous-release.js';
import { loadTemplates } from '../../src/store/indices.js';

const PREFIX = `${RUN_PREFIX}-upgrade`;

/** An instance behind the test's load balancer, with the requests it is serving. */
interface Target {
  name: 'old' | 'new';
  api: Api;
  inFlight: number;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, deadlineMs: number): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > deadlineMs) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await sleep(250);
  }
}

describe('rolling upgrade from the previous release, on one store', function () {
  this.timeout(1_800_000);
  let release: PreviousRelease;
  let es: Client;
  let esUrl: string;
  let old: ReleaseInstance | undefined;
  let fresh: TestApp | undefined;
  const report: Record<string, unknown> = {};

  const oldEnv = (): Record<string, string> => ({
    ELASTICSEARCH_URL: esUrl,
    ECS_INDEX_PREFIX: PREFIX,
    ECS_ADMIN_TOKEN: ADMIN_TOKEN,
    ECS_DEVELOPMENT: 'true',
    DATABASE_URL: 'pglite:memory',
    ECS_JOB_POLL_MS: '200',
  });

  async function ready(url: string): Promise<boolean> {
    return (await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(5000) })).status === 200;
  }

  async function templateVersion(logical: string): Promise<number | undefined> {
    const res = await es.indices.getIndexTemplate({ name: `${PREFIX}-${logical}` });
    const t = res.index_templates[0]?.index_template;
    return t?.version ?? (t?._meta as { version?: number } | undefined)?.version;
  }

  before(async function () {
    this.timeout(900_000);
    release = buildPreviousRelease((l) => process.stderr.write(`  [previous release] ${l}\n`));
    report.previousRelease = {
      version: release.version,
      commit: release.commit.slice(0, 12),
      install: release.install,
      buildMs: release.buildMs,
    };
    esUrl = (await testElasticsearch()).url;
    es = new Client({ node: esUrl, requestTimeout: 60_000 });
  });

  after(async function () {
    this.timeout(120_000);
    await old?.stop().catch(() => undefined);
    await fresh?.close().catch(() => undefined);
    await es?.close().catch(() => undefined);
    console.log(`      upgrade results: ${JSON.stringify(report)}`);
  });

  it('both releases keep serving, the templates stay at this release’s versions, no acknowledged write is lost', async () => {
    const t0 = Date.now();
    old = await startRelease(release, oldEnv());
    await until('the previous release ready', () => ready(old!.url), 600_000);
    report.oldReadyMs = Date.now() - t0;
    const jobsTemplate = loadTemplates().find((t) => t.name === 'jobs');
    expect(await templateVersion('jobs'), 'the previous release wrote an older jobs template').to.be.below(
      jobsTemplate?.version ?? 0,
    );

    const oldAdmin = new Api(old.url, ADMIN_TOKEN);
    const org = uid('org');
    expect((await oldAdmin.post('/admin/organizations', { id: org, name: org })).status).to.equal(201);
    const minted = await oldAdmin.post<{ token: string }>('/admin/tokens', {
      name: 'upgrade-admin',
      role: 'admin',
      orgId: org,
    });
    expect(minted.status, minted.text).to.equal(201);
    const token = minted.body.token;
    /** The instances' addresses, as the load balancer sees them (the old one changes when restarted). */
    const targets: Target[] = [{ name: 'old', api: new Api(old.url, token), inFlight: 0 }];

    const acked = { endpoints: [] as string[], sent: new Map<string, string>(), jobs: [] as string[] };
    const answers: Record<string, number> = {};
    const undeclared: string[] = [];
    let running = true;

    async function write(kind: string, call: () => Promise<ApiResponse>): Promise<ApiResponse | undefined> {
      let res: ApiResponse;
      try {
        res = await call();
      } catch (err) {
        undeclared.push(`${kind}: ${(err as Error).message}`);
        return undefined;
      }
      answers[res.status] = (answers[res.status] ?? 0) + 1;
      if (res.status >= 200 && res.status < 300) return res;
      const retryable = res.status === 503 && Number(res.headers.get('retry-after')) > 0;
      const declared = res.status === 409 && kind !== 'endpoint';
      if (!retryable && !declared) undeclared.push(`${kind}: ${res.status} ${res.text.slice(0, 300)}`);
      await sleep(100);
      return undefined;
    }

    async function worker(n: number): Promise<void> {
      for (let i = n; running; i++) {
        const target = targets[i % targets.length];
        target.inFlight++;
        try {
          await round(target.api);
        } finally {
          target.inFlight--;
        }
      }
    }

    async function round(api: Api): Promise<void> {
      const ep = await write('endpoint', () =>
        api.post<{ id: string }>('/endpoint', { orgId: org, displayName: uid('agent') }),
      );
      if (!ep) return;
      const endpointId = (ep.body as { id: string }).id;
      acked.endpoints.push(endpointId);
      const msg = await write('command', () =>
        api.post(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping' }),
      );
      if (msg) {
        const { id, uuid } = msg.body as { id: string; uuid: string };
        for (let attempt = 0; attempt < 20; attempt++) {
          let status = 0;
          const moved = await write('commandMove', async () => {
            const res = await api.patch(`/command-message/${id}/status/SENT`);
            status = res.status;
            return res;
          });
          if (moved) acked.sent.set(id, uuid);
          if (moved || status !== 503) break;
        }
      }
      const job = await write('job', () =>
        api.post<{ id: string }>('/jobs', {
          action: { type: 'ENABLE_MODULE', module: 'fim' },
          criteria: { orgId: org, basic: uid('none') },
        }),
      );
      if (job) acked.jobs.push((job.body as { id: string }).id);
    }

    const workers = [0, 1, 2].map((n) => worker(n));
    try {
      await until('load under way on the previous release', async () => acked.jobs.length >= 5, 300_000);

      // This release joins: its instance upgrades the store while the old one serves.
      const joinedAt = Date.now();
      fresh = await startTestApp({ ECS_INDEX_PREFIX: PREFIX, ECS_SCHEMA_CHECK_SECONDS: '1', ECS_JOB_POLL_MS: '200' });
      targets.push({ name: 'new', api: fresh.world.as(token), inFlight: 0 });
      report.newReadyMs = Date.now() - joinedAt;
      const jobsAlias = `${PREFIX}-jobs`;
      await until(
        'the jobs index reindexed into its next generation',
        async () => {
          const indices = Object.keys(await es.indices.getAlias({ name: jobsAlias }));
          return indices.length === 1 && indices[0] === `${jobsAlias}-000002`;
        },
        600_000,
      );
      report.jobsReindexedMs = Date.now() - joinedAt;
      const mapping = await es.indices.getMapping({ index: jobsAlias });
      expect(Object.values(mapping)[0].mappings._meta).to.deep.include({ version: jobsTemplate?.version });

      // The old instance restarts in the middle: at start it puts its older templates back.
      // As a load balancer does: the old instance leaves the rotation, drains, stops, and
      // rejoins once ready.
      const before = { jobs: acked.jobs.length, endpoints: acked.endpoints.length };
      const [leaving] = targets.splice(0, 1);
      await until('the old instance drained', async () => leaving.inFlight === 0, 60_000);
      await old.stop();
      const restartAt = Date.now();
      old = await startRelease(release, oldEnv());
      await until('the previous release ready again', () => ready(old!.url), 600_000);
      targets.unshift({ name: 'old', api: new Api(old.url, token), inFlight: 0 });
      report.oldRestartReadyMs = Date.now() - restartAt;
      await until(
        'the jobs template back at this release’s version',
        async () => (await templateVersion('jobs')) === jobsTemplate?.version,
        60_000,
      );
      report.templateRestoredMs = Date.now() - restartAt;
      expect(fresh.logs.some((l) => l.includes('brought the store') && l.includes(jobsAlias))).to.equal(true);
      // Both serve after the restart.
      await until(
        'writes acknowledged through both after the restart',
        async () => acked.jobs.length >= before.jobs + 6 && acked.endpoints.length >= before.endpoints + 6,
        300_000,
      );
    } finally {
      running = false;
      await Promise.all(workers);
    }
    report.answers = answers;
    report.acked = { endpoints: acked.endpoints.length, sent: acked.sent.size, jobs: acked.jobs.length };

    // Templates at this release's versions, every one.
    for (const t of loadTemplates()) expect(await templateVersion(t.name), t.name).to.equal(t.version);

    // Every acknowledged write, read back through both instances.
    const missing: string[] = [];
    for (const [i, id] of acked.endpoints.entries()) {
      const res = await targets[i % 2].api.get(`/endpoint/${id}`);
      if (res.status !== 200) missing.push(`endpoint ${id} (${targets[i % 2].name}): ${res.status}`);
    }
    for (const [i, [id, uuid]] of [...acked.sent.entries()].entries()) {
      const { name, api } = targets[i % 2];
      const msg = await api.get<{ status: string }>(`/command-message/${id}`);
      if (msg.status !== 200 || msg.body.status !== 'SENT')
        missing.push(`command ${id} (${name}): ${msg.status} ${msg.body.status}`);
      if ((await api.get(`/command-message/delivery/${uuid}`)).status !== 200)
        missing.push(`delivery ${uuid} (${name})`);
    }
    for (const [i, id] of acked.jobs.entries()) {
      const res = await targets[i % 2].api.get(`/jobs/${id}`);
      if (res.status !== 200) missing.push(`job ${id} (${targets[i % 2].name}): ${res.status}`);
    }
    report.missing = missing.length;
    report.undeclared = undeclared.length;
    expect(undeclared, undeclared.slice(0, 10).join('\n')).to.deep.equal([]);
    expect(missing, missing.slice(0, 10).join('\n')).to.deep.equal([]);
  });
});
