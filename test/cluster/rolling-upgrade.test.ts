/**
 * A rolling upgrade (`npm run test:cluster`, minutes): the previous release (package.json →
 * config.previousRelease, built from its commit by test/helpers/previous-release.ts) serves
 * under load, an instance of this release joins the same store and prefix and brings the schema
 * to its versions — the jobs index, whose mapping changed in a way Elasticsearch cannot make in
 * place, is reindexed into its next generation and its alias swapped while both serve (so is the
 * endpoints index, whose sort Elasticsearch fixes at creation) — and the
 * old instance is restarted in the middle, as behind a load balancer (it leaves the rotation,
 * drains, stops, starts and rejoins once ready). The previous release predates the schema
 * versions: it puts its older templates back at every start, and this release's instance
 * restores them within its check interval and says so. Asserted: both keep serving (only 2xx,
 * 503 with Retry-After, or a declared 409), each instance answers 2xx while the reindex runs,
 * the new generation holds this release's mapping, the templates end at this release's
 * versions, every acknowledged write is read back through both instances, and once the last old
 * instance is gone a search through this release finds every endpoint, those the previous
 * release wrote without their organization's ancestry included (this release's instance stamps
 * them in the background), with nothing left for `ops org-paths`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { ADMIN_TOKEN, RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { Api, type ApiResponse } from '../helpers/http.js';
import { retryPause, waitFor } from '../helpers/wait.js';
import {
  buildPreviousRelease,
  startRelease,
  type PreviousRelease,
  type ReleaseInstance,
} from '../helpers/previous-release.js';
import { loadTemplates } from '../../src/store/indices.js';

const PREFIX = `${RUN_PREFIX}-upgrade`;
const execFileAsync = promisify(execFile);
const WORKERS = 3;
/** Writes acknowledged before this release joins, and through each instance after the old one's restart. */
const WRITES_PER_PHASE = 6;

type Name = 'old' | 'new';

/** An instance behind the test's load balancer, with the requests it is serving. */
interface Target {
  name: Name;
  api: Api;
  inFlight: number;
}

/** A request answered 2xx: by which instance, when it was sent and answered. */
interface Served {
  name: Name;
  sentAt: number;
  answeredAt: number;
}

interface LogLine {
  /** Epoch milliseconds. */
  time: number;
  msg: string;
  templatesPut?: string[];
}

const progress = (line: string) => process.stderr.write(`  [upgrade] ${line}\n`);

/** Waits until `probe` gives a value (a thrown probe counts as not yet); fails with `what` at the deadline. */
async function until<T>(what: string, probe: () => Promise<T | undefined | false>, deadlineMs: number): Promise<T> {
  const waited = await waitFor(
    () => probe().catch(() => undefined),
    (v) => v !== undefined && v !== false,
    deadlineMs,
    250,
  );
  if (!waited.met) throw new Error(`${what}: not within ${deadlineMs} ms`);
  progress(`${what} (${Math.round(waited.elapsedMs)} ms)`);
  return waited.value as T;
}

/** The JSON lines an instance logged (a chunk may hold several). */
function logLines(chunks: string[]): LogLine[] {
  return chunks
    .flatMap((c) => c.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      const line = JSON.parse(l) as Omit<LogLine, 'time'> & { time: string | number };
      return { ...line, time: new Date(line.time).getTime() };
    });
}

describe('rolling upgrade from the previous release, on one store', function () {
  this.timeout(900_000);
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
    this.timeout(600_000);
    release = buildPreviousRelease(progress);
    report.previousRelease = {
      version: release.version,
      commit: release.commit.slice(0, 12),
      install: release.install,
      buildMs: release.buildMs,
    };
    progress(`previous release ${release.version} (${release.commit.slice(0, 12)}): ${release.install} dependencies, built in ${release.buildMs} ms`);
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
    await until('the previous release ready', () => ready(old!.url), 300_000);
    report.oldReadyMs = Date.now() - t0;
    const templates = loadTemplates();
    const jobsTemplate = templates.find((t) => t.name === 'jobs');
    if (!jobsTemplate) throw new Error('no jobs template');
    expect(await templateVersion('jobs'), 'the previous release wrote an older jobs template').to.be.below(jobsTemplate.version);

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

    /**
     * `created`: every command message created, id → uuid; `sent`: those whose move to SENT was
     * acknowledged; `oldMove503`: those whose move the previous release answered 503.
     */
    const acked = {
      endpoints: [] as string[],
      created: new Map<string, string>(),
      sent: new Map<string, string>(),
      oldMove503: new Set<string>(),
      jobs: [] as string[],
    };
    const answers: Record<string, number> = {};
    const served: Served[] = [];
    const undeclared: string[] = [];
    let running = true;

    async function write(target: Target, kind: string, call: () => Promise<ApiResponse>): Promise<ApiResponse | undefined> {
      const sentAt = Date.now();
      let res: ApiResponse;
      try {
        res = await call();
      } catch (err) {
        undeclared.push(`${kind} (${target.name}): ${(err as Error).message}`);
        return undefined;
      }
      answers[res.status] = (answers[res.status] ?? 0) + 1;
      if (res.status >= 200 && res.status < 300) {
        served.push({ name: target.name, sentAt, answeredAt: Date.now() });
        return res;
      }
      const retryable = res.status === 503 && Number(res.headers.get('retry-after')) > 0;
      // A job create never conflicts; a command's move may (another move won).
      const declared = res.status === 409 && kind === 'commandMove';
      if (!retryable && !declared) undeclared.push(`${kind} (${target.name}): ${res.status} ${res.text.slice(0, 300)}`);
      // As a client does: it comes back when the answer says.
      if (retryable) await retryPause(Number(res.headers.get('retry-after')) * 1000);
      return undefined;
    }

    async function worker(n: number): Promise<void> {
      for (let i = n; running; i++) {
        const target = targets[i % targets.length];
        target.inFlight++;
        try {
          await round(target);
        } finally {
          target.inFlight--;
        }
      }
    }

    async function round(target: Target): Promise<void> {
      const { api } = target;
      const ep = await write(target, 'endpoint', () =>
        api.post<{ id: string }>('/endpoint', { orgId: org, displayName: uid('agent') }),
      );
      if (!ep) return;
      const endpointId = (ep.body as { id: string }).id;
      acked.endpoints.push(endpointId);
      const msg = await write(target, 'command', () =>
        api.post(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping' }),
      );
      if (msg) {
        const { id, uuid } = msg.body as { id: string; uuid: string };
        acked.created.set(id, uuid);
        // The gateway repeats a move answered 503 under the same Idempotency-Key; through this
        // release the repeat completes a move that landed (docs/adr/0111).
        const key = { headers: { 'Idempotency-Key': `move-${id}` } };
        for (let attempt = 0; attempt < 20; attempt++) {
          let status = 0;
          const moved = await write(target, 'commandMove', async () => {
            const res = await api.patch(`/command-message/${id}/status/SENT`, undefined, key);
            status = res.status;
            return res;
          });
          if (moved) acked.sent.set(id, uuid);
          if (status === 503 && target.name === 'old') acked.oldMove503.add(id);
          if (moved || status !== 503) break;
        }
      }
      const job = await write(target, 'job', () =>
        api.post<{ id: string }>('/jobs', {
          action: { type: 'ENABLE_MODULE', module: 'fim' },
          criteria: { orgId: org, basic: uid('none') },
        }),
      );
      if (job) acked.jobs.push((job.body as { id: string }).id);
    }

    const workers = Array.from({ length: WORKERS }, (_, n) => worker(n));
    const jobsAlias = `${PREFIX}-jobs`;
    try {
      await until('load under way on the previous release', async () => acked.jobs.length >= WRITES_PER_PHASE, 120_000);

      // This release joins: its instance upgrades the store while the old one serves.
      const joinedAt = Date.now();
      fresh = await startTestApp({ ECS_INDEX_PREFIX: PREFIX, ECS_SCHEMA_CHECK_SECONDS: '1', ECS_JOB_POLL_MS: '200' });
      targets.push({ name: 'new', api: fresh.world.as(token), inFlight: 0 });
      report.newReadyMs = Date.now() - joinedAt;
      progress(`this release ready (${report.newReadyMs} ms)`);
      await until(
        'the jobs index reindexed into its next generation',
        async () => {
          const indices = Object.keys(await es.indices.getAlias({ name: jobsAlias }));
          return indices.length === 1 && indices[0] === `${jobsAlias}-000002`;
        },
        120_000,
      );
      report.jobsReindexedMs = Date.now() - joinedAt;
      const mapping = (await es.indices.getMapping({ index: jobsAlias }))[`${jobsAlias}-000002`].mappings;
      expect(mapping._meta).to.deep.include({ version: jobsTemplate.version });
      expect(mapping.properties?.creator, 'the creator indexed in the new generation').to.not.have.property('enabled');
      // Both instances answered 2xx while the schema moved: from the first reindex's start to the
      // jobs reindex's end (the endpoints index, sorted since its template's version 5, moves to a
      // sorted generation in the same check; the last line follows the alias swap). A single
      // short reindex can fall wholly inside the callers' Retry-After pause after the write block
      // of the one before it, so the window is the upgrade's, not one index's.
      const ended = await until(
        'the reindex logged its end',
        async () => logLines(fresh!.logs).find((l) => l.msg.startsWith('schema: jobs reindexed into'))?.time,
        30_000,
      );
      const began = logLines(fresh.logs).find((l) => l.msg.startsWith('schema: reindexing '))?.time;
      expect(began, 'the reindex logged its start').to.be.a('number');
      const during = (name: Name) => served.filter((s) => s.name === name && s.answeredAt >= began! && s.sentAt <= ended).length;
      report.reindex = { ms: ended - began!, servedOld: during('old'), servedNew: during('new') };
      expect(during('old'), 'the previous release answered 2xx during the reindex').to.be.greaterThan(0);
      expect(during('new'), 'this release answered 2xx during the reindex').to.be.greaterThan(0);

      // The old instance restarts in the middle, as behind a load balancer: it leaves the
      // rotation, drains, stops, starts (putting its older templates back) and rejoins once ready.
      const before = { logs: fresh.logs.length };
      const [leaving] = targets.splice(0, 1);
      await until('the old instance drained', async () => leaving.inFlight === 0, 60_000);
      await old.stop();
      const restartAt = Date.now();
      old = await startRelease(release, oldEnv());
      await until('the previous release ready again', () => ready(old!.url), 300_000);
      const rejoinedAt = Date.now();
      targets.unshift({ name: 'old', api: new Api(old.url, token), inFlight: 0 });
      report.oldRestartReadyMs = rejoinedAt - restartAt;
      // Its start put its older templates back; this release's instance puts its own over them
      // (every check interval) and says so.
      const restored = await until(
        'this release restored its templates over the older ones',
        async () =>
          logLines(fresh!.logs.slice(before.logs)).find(
            (l) => l.msg.startsWith('schema: brought the store') && (l.templatesPut ?? []).includes(jobsAlias),
          ),
        60_000,
      );
      expect(restored.time).to.be.at.least(restartAt);
      await until(
        'every template at this release’s version again',
        async () => {
          for (const t of templates) if ((await templateVersion(t.name)) !== t.version) return false;
          return true;
        },
        60_000,
      );
      report.templatesRestoredAfterReadyMs = Date.now() - rejoinedAt;
      // Both serve after the restart.
      const servedSince = (name: Name) => served.filter((s) => s.name === name && s.sentAt >= rejoinedAt).length;
      await until(
        'writes acknowledged through both after the restart',
        async () => servedSince('old') >= WRITES_PER_PHASE && servedSince('new') >= WRITES_PER_PHASE,
        120_000,
      );
    } finally {
      running = false;
      await Promise.all(workers);
    }
    report.answers = answers;
    report.acked = { endpoints: acked.endpoints.length, commands: acked.created.size, sent: acked.sent.size, jobs: acked.jobs.length };

    // Templates at this release's versions, every one, and the restarted old instance left
    // the jobs index on its new generation.
    for (const t of templates) expect(await templateVersion(t.name), t.name).to.equal(t.version);
    expect(Object.keys(await es.indices.getAlias({ name: jobsAlias }))).to.deep.equal([`${jobsAlias}-000002`]);

    // Every acknowledged write, read back through both instances.
    const missing: string[] = [];
    let previousReleaseUndelivered = 0;
    for (const { name, api } of targets) {
      for (const id of acked.endpoints) {
        const res = await api.get(`/endpoint/${id}`);
        if (res.status !== 200) missing.push(`endpoint ${id} (${name}): ${res.status}`);
      }
      // A message acknowledged SENT reads SENT; any message found SENT has its delivery record,
      // but one the previous release answered 503 on its move: that release failed a landed move
      // when its endpoint's sign of life was refused (the endpoints index blocked for the swap),
      // and without keyed moves its repeat is refused SENT → SENT. Counted, not hidden.
      for (const [id, uuid] of acked.created) {
        const msg = await api.get<{ status: string }>(`/command-message/${id}`);
        if (msg.status !== 200 || (acked.sent.has(id) && msg.body.status !== 'SENT'))
          missing.push(`command ${id} (${name}): ${msg.status} ${msg.body.status}`);
        if (msg.body.status !== 'SENT' || (await api.get(`/command-message/delivery/${uuid}`)).status === 200) continue;
        if (acked.sent.has(id) || !acked.oldMove503.has(id)) missing.push(`delivery ${uuid} of a SENT message (${name})`);
        else if (name === 'new') previousReleaseUndelivered++;
      }
      for (const id of acked.jobs) {
        const res = await api.get(`/jobs/${id}`);
        if (res.status !== 200) missing.push(`job ${id} (${name}): ${res.status}`);
      }
    }
    report.missing = missing.length;
    report.previousReleaseUndelivered = previousReleaseUndelivered;
    report.undeclared = undeclared.length;
    expect(undeclared, undeclared.slice(0, 10).join('\n')).to.deep.equal([]);
    expect(missing, missing.slice(0, 10).join('\n')).to.deep.equal([]);

    // The last old instance is replaced. The previous release wrote its records without their
    // organization's ancestry; this release's instance stamps them in the background
    // (docs/adr/0088-ancestry-stamped-in-the-background.md), so a search finds every one.
    await old.stop();
    old = undefined;
    const newApi = targets.find((t) => t.name === 'new')?.api;
    if (!newApi) throw new Error('no instance of this release');
    const searched = async (): Promise<number> => {
      const page = await newApi.post<{ totalCount: number }>('/endpoint/page-search', { criteria: {} });
      expect(page.status, page.text).to.equal(200);
      return page.body.totalCount;
    };
    await es.indices.refresh({ index: `${PREFIX}-endpoints` });
    const stored = (await es.count({ index: `${PREFIX}-endpoints`, query: { term: { orgId: org } } })).count;
    expect(stored).to.be.at.least(acked.endpoints.length);
    const found = await waitFor(searched, (n) => n === stored, 60_000, 250);
    report.searched = { found: found.value, stored };
    expect(found.value, 'every endpoint found by a search through this release').to.equal(stored);
    // Nothing left once the operator's command has run too (it may meet the background stamping's last indices).
    const run = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/ops.ts', 'org-paths', '--json'], {
      env: { ...process.env, ELASTICSEARCH_URL: esUrl, ECS_INDEX_PREFIX: PREFIX, ECS_DEVELOPMENT: 'true', DATABASE_URL: 'pglite:memory' },
    });
    const orgPaths = JSON.parse(run.stdout) as { found: number; left: number };
    report.orgPaths = orgPaths;
    expect(orgPaths.left).to.equal(0);
  });
});
