import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { TEST_DATABASE_URL, dropSchema, holdAdvisoryLock, sql, testSchema } from '../helpers/postgres.js';
import { deviceDoc, indexOps } from '../helpers/device-fixtures.js';
import { bulkEndpoints, endpointStore } from '../helpers/endpoint-store.js';
import { loadTemplates } from '../../src/store/indices.js';

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('ops CLI (npm run ops / npm run admin)', function () {
  this.timeout(240_000);
  const prefix = `${RUN_PREFIX}-cli`;
  const schema = testSchema('cli');
  let t: TestApp;
  let env: NodeJS.ProcessEnv;

  /** Spawns the CLI; `killWhen` SIGKILLs it as soon as its stderr satisfies the predicate. */
  function cli(script: 'ops' | 'admin', args: string[], killWhen?: (stderr: string) => boolean): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', `src/cli/${script}.ts`, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (killWhen?.(stderr) && child.exitCode === null) child.kill('SIGKILL');
      });
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  }

  before(async () => {
    // Its background checks (schema, ancestry) run at start and then daily: the commands, not the instance, act on what a case writes.
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix, DATABASE_URL: TEST_DATABASE_URL, ECS_SQL_SCHEMA: schema, ECS_SCHEMA_CHECK_SECONDS: '86400' });
    env = {
      ...process.env,
      ELASTICSEARCH_URL: (await testElasticsearch()).url,
      ECS_INDEX_PREFIX: prefix,
      DATABASE_URL: TEST_DATABASE_URL,
      ECS_SQL_SCHEMA: schema,
    };
    delete env.LOG_LEVEL;
  });
  after(async () => {
    await t.close();
    await dropSchema(schema);
  });

  /**
   * `n` agents of a new organization as a release before ancestry wrote them (straight into the
   * index, no ancestry), and the count a search of its parent's admin finds.
   */
  async function unstampedAgents(n: number, label: string): Promise<{ ids: string[]; count: () => Promise<number> }> {
    const parent = await t.world.org();
    const child = await t.world.org(parent);
    const ids = Array.from({ length: n }, (_, i) => `${child}-${label}-${i}`);
    const now = new Date().toISOString();
    const by = { username: 'seed', authenticator: 'none' };
    const res = await t.server.store.client.bulk({
      index: `${prefix}-endpoints`,
      refresh: true,
      operations: ids.flatMap((id) => [
        { create: { _id: id } },
        { id, orgId: child, type: 'VC_ENDPOINT', connectionStatus: 'NEVER', deleted: false, createdAt: now, updatedAt: now, createdBy: by, updatedBy: by },
      ]),
    });
    expect(res.errors).to.equal(false);
    const admin = t.world.as(await t.world.token('admin', parent));
    const count = async (): Promise<number> => {
      const page = await admin.post<{ totalCount: number }>('/endpoint/page-search', { criteria: {} });
      expect(page.status).to.equal(200);
      return page.body.totalCount;
    };
    return { ids, count };
  }

  it('usage errors exit 2 and print the usage; --help exits 0', async () => {
    const none = await cli('ops', []);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.contain('usage: npm run ops -- <command>');
    const badFamily = await cli('ops', ['migrate', 'wifi']);
    expect(badFamily.code).to.equal(2);
    expect(badFamily.stderr).to.contain('migrate needs utm or lte');
    const badIndex = await cli('ops', ['reindex', 'no-such-index']);
    expect(badIndex.code).to.equal(2);
    expect(badIndex.stderr).to.contain('unknown index no-such-index; known:').and.contain('endpoints');
    // An unknown flag, and a flag of another command, are usage errors naming the flag: never ignored.
    const unknown = await cli('ops', ['reindex', 'endpoints', '--forse']);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain("Unknown option '--forse'");
    const stray = await cli('ops', ['migrate', 'utm', '--force']);
    expect(stray.code).to.equal(2);
    expect(stray.stderr).to.contain('migrate does not take --force; it takes --batch-size, --json');
    const strayAdmin = await cli('admin', ['token', 'revoke', 'some-id', '--role', 'admin']);
    expect(strayAdmin.code).to.equal(2);
    expect(strayAdmin.stderr).to.contain('admin token revoke does not take --role');
    const help = await cli('admin', ['--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.contain('admin token create --role');
  });

  it('admin org create|show and token create|revoke wrap the admin operations (npm run admin is an alias)', async () => {
    const orgId = `cli-org-${RUN_PREFIX}`;
    const created = await cli('admin', ['org', 'create', orgId, 'CLI', 'Org']);
    expect(created.code, created.stderr).to.equal(0);
    expect(JSON.parse(created.stdout)).to.include({ id: orgId, name: 'CLI Org' });

    const shown = await cli('ops', ['admin', 'org', 'show', orgId]);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(JSON.parse(shown.stdout)).to.include({ id: orgId, name: 'CLI Org' });
    expect((await t.admin.get<{ name: string }>(`/admin/organizations/${orgId}`)).body.name).to.equal('CLI Org');

    const missing = await cli('ops', ['admin', 'org', 'show', 'no-such-org']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('organization no-such-org not found');

    const token = await cli('admin', ['token', 'create', '--role', 'admin', '--org', orgId, '--name', 'ops test']);
    expect(token.code, token.stderr).to.equal(0);
    const issued = JSON.parse(token.stdout) as { id: string; token: string; role: string; orgId: string };
    expect(issued).to.include({ role: 'admin', orgId, name: 'ops test' });
    const revoked = await cli('ops', ['admin', 'token', 'revoke', issued.id]);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.equal(`revoked token ${issued.id}\n`);
    // The service knows the token (minted by the CLI) and that it was revoked.
    const res = await t.world.as(issued.token).get<{ message: string }>('/client-version/default');
    expect(res.status).to.equal(401);
    expect(res.body.message).to.equal('token revoked');
  });

  it('migrate: killed between batches, run again, every record is in SQL exactly once; a held lock exits 3', async () => {
    const orgId = await t.world.org();
    const docs = Array.from({ length: 1000 }, (_, i) => deviceDoc(i % 2 ? 'VC_UTM' : 'EXTERNAL_UTM', i, orgId, 'cli'));
    expect((await bulkEndpoints(t.server.store, indexOps(docs))).errors).to.equal(false);

    // Progress goes to stderr after each committed batch: kill at the first one.
    const killed = await cli('ops', ['migrate', 'utm', '--batch-size', '50', '--json'], (err) => err.includes('migrate utm ['));
    expect(killed.signal, killed.stderr).to.equal('SIGKILL');
    const [partial] = await sql<{ n: string }>(schema, 'SELECT count(*) AS n FROM utm_devices');
    expect(Number(partial.n), `rows after the kill; the CLI printed: ${killed.stderr}`).to.be.at.least(50);

    const rerun = await cli('ops', ['migrate', 'utm', '--batch-size', '50', '--json']);
    expect(rerun.code, rerun.stderr).to.equal(0);
    const counts = JSON.parse(rerun.stdout) as { sourceCount: number; destCount: number; ignoredCount: number };
    expect(counts.sourceCount).to.equal(1000);
    expect(counts.destCount + counts.ignoredCount).to.equal(1000);
    expect(counts.ignoredCount).to.be.at.least(50);
    const [rows] = await sql<{ n: string; ids: string }>(schema, 'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM utm_devices');
    expect(rows).to.deep.equal({ n: '1000', ids: '1000' });
    expect(await endpointStore(t.server.store).count({ term: { externalStatus: 'MIGRATED_TO_SQL' } })).to.equal(1000);

    const lock = await holdAdvisoryLock(`ecs:device-migration:${schema}:utm`);
    try {
      const busy = await cli('ops', ['migrate', 'utm']);
      expect(busy.code).to.equal(3);
      expect(busy.stderr).to.contain('a UTM device migration is already in progress');
    } finally {
      await lock.release();
    }
    const last = await cli('ops', ['migrate', 'utm']);
    expect(last.code, last.stderr).to.equal(0);
    expect(last.stdout).to.match(/UTM device migration finished in [\d.]+ s\n/);
    expect(last.stdout).to.match(/source records\s+1,000\n\s+rows written\s+0\n\s+ignored\s+1,000/);
  });

  it('org-paths: records written before records carried their ancestry become visible to subtree reads of their admins', async () => {
    const { ids, count } = await unstampedAgents(30, 'old');
    expect(await count(), 'unstamped records are not in the subtree').to.equal(0);
    const run = await cli('ops', ['org-paths', '--json']);
    expect(run.code, run.stderr).to.equal(0);
    const out = JSON.parse(run.stdout) as { stamped: number; left: number };
    expect(out.stamped).to.be.at.least(ids.length);
    expect(out.left).to.equal(0);
    expect(await count()).to.equal(ids.length);
    const again = await cli('ops', ['org-paths', '--json']);
    expect(again.code, again.stderr).to.equal(0);
    expect((JSON.parse(again.stdout) as { stamped: number }).stamped, 'a second run finds nothing to do').to.equal(0);
  });

  it('org paths: an instance stamps records an older release writes without ancestry in the background, within its check interval', async () => {
    const { ids, count } = await unstampedAgents(20, 'rollout');
    expect(await count(), 'unstamped records are not in the subtree').to.equal(0);
    // A second instance of this release, checking every second, as during a rollout.
    const checking = await startTestApp({ ECS_INDEX_PREFIX: prefix, DATABASE_URL: TEST_DATABASE_URL, ECS_SQL_SCHEMA: schema, ECS_SCHEMA_CHECK_SECONDS: '1' });
    try {
      const found = await waitFor(count, (n) => n === ids.length, 30_000, 200);
      expect(found.value, 'records visible to the subtree after the background stamping').to.equal(ids.length);
      // The line comes once the pass has ended (its records are searchable a little before).
      const said = await waitFor(
        () => Promise.resolve(checking.logs.find((l) => l.includes('org paths:') && l.includes('were stamped'))),
        (l) => l !== undefined,
        30_000,
        50,
      );
      expect(said.value, 'the stamping instance says what it did').to.be.a('string');
      expect(JSON.parse(said.value as string)).to.include({ stamped: ids.length });
    } finally {
      await checking.close();
    }
  });

  it('sessions: lists a person’s live login sessions and ends them on every instance, audited; usage errors exit 2', async () => {
    const email = `${uid('person')}@people.example`;
    const person = { subject: uid('sub'), issuer: 'https://idp.example/realms/ecs', email, name: 'Operator Case', grants: [{ role: 'reader' as const, orgId: await t.world.org() }] };
    const req = { requestId: uid('req'), method: 'GET', path: '/auth/callback' };
    const [one, two] = [await t.server.handle.services.sessions.create(person, req), await t.server.handle.services.sessions.create(person, req)];
    const bystander = await t.server.handle.services.sessions.create({ ...person, subject: uid('sub'), email: `${uid('other')}@people.example` }, req);
    const session = (secret: string): Promise<Response> => fetch(`${t.url}/auth/session`, { headers: { cookie: `ecs_session=${secret}` } });
    for (const s of [one, two, bystander]) expect((await session(s.secret)).status).to.equal(200);

    const listed = await cli('ops', ['sessions', 'list', '--email', email, '--json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = (JSON.parse(listed.stdout) as { sessions: { id: string; email: string; grants: string[] }[] }).sessions;
    expect(rows.map((r) => r.id).sort()).to.deep.equal([one.hash.slice(0, 16), two.hash.slice(0, 16)].sort());
    expect(rows[0]).to.include({ email });
    expect(rows[0].grants).to.deep.equal([`reader@${person.grants[0].orgId}`]);

    const ended = await cli('ops', ['sessions', 'end', '--email', email, '--json']);
    expect(ended.code, ended.stderr).to.equal(0);
    expect(JSON.parse(ended.stdout)).to.include({ ended: 2 });
    // The service learns it through the change feed, as from another instance.
    for (const s of [one, two]) {
      const refused = await waitFor(() => session(s.secret), (r) => r.status === 401, 10_000, 50);
      expect(refused.met, 'a session ended by the operator still opened').to.equal(true);
    }
    expect((await session(bystander.secret)).status, 'another person’s session').to.equal(200);
    const audited = await waitFor(
      () => t.admin.post<{ items: { kind: string; reason?: string }[] }>('/audit/search-page', { criteria: { actorEmail: email }, pageRequest: { size: 10 } }),
      (r) => r.status === 200 && r.body.items.filter((e) => e.kind === 'SIGN_OUT').length === 2,
      10_000,
      100,
    );
    expect(audited.value.body.items.filter((e) => e.kind === 'SIGN_OUT').map((e) => e.reason)).to.deep.equal(['ended-by-operator', 'ended-by-operator']);

    for (const bad of [['sessions', 'end'], ['sessions', 'end', '--email', email, '--all'], ['sessions', 'list', '--all'], ['sessions', 'drop']]) {
      const run = await cli('ops', bad);
      expect(run.code, bad.join(' ')).to.equal(2);
    }
  });

  it('reindex: no-op when current, --force reindexes, a leftover exits 3 until --restart', async () => {
    const mappingVersion = loadTemplates().find((x) => x.name === 'client-versions')?.version;
    const alias = `${prefix}-client-versions`;
    const current = await cli('ops', ['reindex', 'client-versions']);
    expect(current.code, current.stderr).to.equal(0);
    expect(current.stdout).to.equal(`reindex client-versions: ${alias}-000001 already has the current mapping (version ${mappingVersion}); nothing to do\n`);

    const forced = await cli('ops', ['reindex', 'client-versions', '--force']);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stdout).to.contain(`${alias}-000001 (mapping version ${mappingVersion}) -> ${alias}-000002 (version ${mappingVersion})`);
    expect(forced.stdout).to.contain(`alias            ${alias} -> ${alias}-000002`);
    expect(Object.keys(await t.server.store.client.indices.getAlias({ name: alias }))).to.deep.equal([`${alias}-000002`]);

    await t.server.store.client.indices.create({ index: `${alias}-000003` });
    const leftover = await cli('ops', ['reindex', 'client-versions', '--force']);
    expect(leftover.code).to.equal(3);
    expect(leftover.stderr).to.contain('--restart');
    const restarted = await cli('ops', ['reindex', 'client-versions', '--force', '--restart', '--json']);
    expect(restarted.code, restarted.stderr).to.equal(0);
    expect(JSON.parse(restarted.stdout)).to.include({ command: 'reindex', status: 'reindexed', to: `${alias}-000003` });
  });
});
