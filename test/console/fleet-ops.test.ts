/**
 * The console's fleet operations in a real Chromium against the real service and
 * Elasticsearch: presence (last seen, POTENTIALLY_DISCONNECTED), exports of a table's search,
 * the audit page, and bulk-action jobs. Screenshots land in .local/console-screenshots/.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { commandsFor, loadCatalogue } from '../../src/resources/commands/catalogue.js';
import type { Api } from '../helpers/http.js';
import { startTestApp, type EndpointRecord, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { openConsoleBrowser, type ConsoleBrowser } from '../helpers/console-browser.js';


interface Page_<T> {
  totalCount: number;
  items: T[];
}

describe('console fleet operations in Chromium', function () {
  this.timeout(120_000);
  let t: TestApp;
  let root: string;
  let adminToken: string;
  let readerToken: string;
  let admin: Api;
  let stale: string[];
  let b: ConsoleBrowser;
  let page: Page;
  const shot = (name: string): Promise<void> => b.shot(name);
  async function signIn(token: string): Promise<void> {
    await b.signIn(t.url, token);
    await page.waitForSelector('#scope-org');
  }
  async function download(selector: string): Promise<string> {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    const file = await dl.path();
    return fs.readFileSync(file, 'utf8');
  }

  before(async function () {
    this.timeout(300_000);
    // Jobs act on 5 agents a second here, so a job runs long enough to be watched and cancelled.
    // A soft-delete of more than 10 agents asks for its count to be typed.
    t = await startTestApp({ ECS_JOB_RATE_PER_SECOND: '5', ECS_JOB_BATCH_SIZE: '5', ECS_JOB_POLL_MS: '200', ECS_JOB_CONFIRM_TYPED_COUNT: '10' });
    root = await t.world.org();
    [adminToken, readerToken] = await Promise.all([t.world.token('admin', root), t.world.token('reader', root)]);
    admin = t.world.as(adminToken);
    // The presence test's technique: a short per-organization timeout (its agent configuration).
    const cfg = await t.admin.post('/config/org', { orgId: root, fields: { presenceTimeoutSeconds: 1 } });
    expect(cfg.status, cfg.text).to.equal(201);
    const agents: EndpointRecord[] = [];
    for (let i = 0; i < 24; i += 12) {
      agents.push(...(await Promise.all(Array.from({ length: 12 }, (_, k) => t.world.endpoint(root, { displayName: `fleet-${String(i + k).padStart(2, '0')}`, hostInfo: { os: 'windows', hostName: `h-${i + k}` } })))));
    }
    await Promise.all(Array.from({ length: 15 }, (_, k) => t.world.endpoint(root, { displayName: `jobtag-${k}`, hostInfo: { os: 'linux', hostName: `j-${k}` } })));
    stale = agents.slice(0, 2).map((a) => a.id).sort();
    for (const id of stale) expect((await t.admin.post(`/endpoint/${id}/connect`)).status).to.equal(204);
    for (const id of stale) {
      const w = await waitFor(() => t.admin.get<EndpointRecord>(`/endpoint/${id}`), (r) => r.body.connectionStatus === 'POTENTIALLY_DISCONNECTED', 30_000, 200);
      expect(w.met, 'stale').to.equal(true);
    }
    b = await openConsoleBrowser({ acceptDownloads: true });
    page = b.page;
    await signIn(adminToken);
  });

  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('shows last seen and POTENTIALLY_DISCONNECTED in the agents table, its filter, and the overview chart', async () => {
    await page.goto(`${t.url}/console#/endpoints/agents`);
    await page.selectOption('#agent-status', 'POTENTIALLY_DISCONNECTED');
    await page.waitForSelector('[data-table="agents"] .total[data-total="2"]');
    const rowIds = () => page.$$eval('[data-table="agents"] tbody tr[data-row]', (trs) => trs.map((r) => r.getAttribute('data-row') ?? '').sort());
    const rows = await waitFor(rowIds, (ids) => ids.length === stale.length, 5000, 50);
    expect(rows.value).to.deep.equal(stale);
    const headers = await page.$$eval('[data-table="agents"] thead th', (ths) => ths.map((h) => h.textContent?.trim()));
    expect(headers).to.include('Last seen');
    const col = headers.indexOf('Last seen');
    const cells = await page.$$eval(`[data-table="agents"] tbody tr[data-row] td:nth-child(${col + 1})`, (tds) => tds.map((d) => d.textContent ?? ''));
    for (const c of cells) expect(c).to.match(/\d{2}\/\d{2}\/\d{4}/);
    expect(await page.$$('[data-table="agents"] .badge-warn[data-status="POTENTIALLY_DISCONNECTED"]')).to.have.length(2);
    await shot('endpoints-presence');

    await page.goto(`${t.url}/console#/overview`);
    const row = await page.waitForSelector('[data-chart="endpoints-by-status"] tr[data-key="agent POTENTIALLY_DISCONNECTED"]');
    expect(await row.getAttribute('data-count')).to.equal('2');
    expect(await row.getAttribute('class')).to.equal('warn');
    const api = await admin.post<{ key: string; count: number }[]>('/endpoint/connection-status/aggregation', {});
    expect(api.body.find((b) => b.key === 'POTENTIALLY_DISCONNECTED')?.count).to.equal(2);
  });

  it("downloads NDJSON and CSV exports of the table's search equal to the API's page, with the token never in a URL", async () => {
    await page.goto(`${t.url}/console#/endpoints/agents`);
    await page.fill('#agent-search', 'fleet');
    await page.click('form[role="search"] button[type="submit"]');
    await page.waitForSelector('[data-table="agents"] .total[data-total="24"]');
    const apiPage = await admin.post<Page_<EndpointRecord>>('/endpoint/page-search', {
      criteria: { basic: 'fleet', orgId: root },
      pageRequest: { page: 0, size: 100, sort: [{ field: 'displayName', direction: 'ASC' }] },
    });
    expect(apiPage.body.totalCount).to.equal(24);
    const ndjson = await download('[data-export="agents"] [data-export-format="ndjson"]');
    const records = ndjson.trim().split('\n').map((l) => JSON.parse(l) as EndpointRecord);
    expect(records.map((r) => [r.id, r.displayName, r.connectionStatus])).to.deep.equal(apiPage.body.items.map((r) => [r.id, r.displayName, r.connectionStatus]));
    expect(records.filter((r) => r.connectionStatus === 'POTENTIALLY_DISCONNECTED').map((r) => r.id).sort()).to.deep.equal(stale);
    const csv = await download('[data-export="agents"] [data-export-format="csv"]');
    const lines = csv.trim().split('\r\n');
    expect(lines).to.have.length(25);
    expect(lines[0].split(',')).to.include('displayName');
    const idCol = lines[0].split(',').indexOf('id');
    expect(lines.slice(1).map((l) => l.split(',')[idCol])).to.deep.equal(apiPage.body.items.map((r) => r.id));
    expect(b.requestUrls.filter((u) => u.includes(adminToken))).to.deep.equal([]);
  });

  it('a job created from the agents table is confirmed with its dry run (count, organizations; a large soft-delete has its count typed), runs to DONE with its bar at 100 %; another is cancelled', async () => {
    await page.goto(`${t.url}/console#/endpoints/agents`);
    await page.fill('#agent-search', 'jobtag');
    await page.click('form[role="search"] button[type="submit"]');
    await page.waitForSelector('[data-table="agents"] .total[data-total="15"]');
    await page.click('[data-create-job]');
    await page.waitForSelector('#jobs');
    expect(JSON.parse((await page.textContent('[data-job-criteria]')) ?? '{}')).to.deep.equal({ basic: 'jobtag' });
    await page.selectOption('#job-action', 'SOFT_DELETE');
    await page.click('#job-review');
    // The confirmation shows the job's dry run: the count and the organizations it spans.
    const confirm = await page.waitForSelector('[data-job-confirm]');
    expect(await confirm.getAttribute('data-job-confirm')).to.equal('15');
    expect(await page.textContent('#job-confirm-text')).to.match(/soft-delete on 15 matching agents, in 1 organization/);
    expect(await page.$$eval('[data-job-orgs] li', (lis) => lis.map((l) => [l.getAttribute('data-job-org'), l.getAttribute('data-count')]))).to.deep.equal([[root, '15']]);
    // 15 agents to soft-delete, above the threshold: the person types the count before the job can start.
    expect(await confirm.getAttribute('data-job-typed')).to.equal('true');
    expect(await page.isDisabled('#job-confirm')).to.equal(true);
    await page.fill('#job-confirm-count', '14');
    expect(await page.isDisabled('#job-confirm')).to.equal(true);
    expect((await admin.get<Page_<unknown>>('/jobs')).body.totalCount, 'nothing started before the confirmation').to.equal(0);
    await page.fill('#job-confirm-count', '15');
    await page.waitForSelector('#job-confirm:not([disabled])');
    await shot('jobs-confirm');
    await page.click('#job-confirm');
    const done = await page.waitForSelector('tr[data-job-state="DONE"]', { timeout: 60_000 });
    expect(await (await done.$('[data-progress]'))?.getAttribute('data-progress')).to.equal('100');
    const jobId = (await done.getAttribute('data-job')) ?? '';
    const job = await admin.get<{ state: string; matched: number; done: number }>(`/jobs/${jobId}`);
    expect(job.body).to.include({ state: 'DONE', matched: 15, done: 15 });
    expect((await admin.post<Page_<EndpointRecord>>('/endpoint/page-search', { criteria: { basic: 'jobtag', orgId: root }, pageRequest: { page: 0, size: 1 } })).body.totalCount).to.equal(0);

    // A command to the 24 fleet agents at 5 a second: cancelled while it runs.
    await page.goto(`${t.url}/console#/endpoints/agents`);
    await page.fill('#agent-search', 'fleet');
    await page.click('form[role="search"] button[type="submit"]');
    await page.waitForSelector('[data-table="agents"] .total[data-total="24"]');
    await page.click('[data-create-job]');
    await page.fill('#job-command', commandsFor(loadCatalogue(), 'windows')[0]);
    await page.click('#job-review');
    expect(await (await page.waitForSelector('[data-job-confirm]')).getAttribute('data-job-confirm')).to.equal('24');
    // Not a soft-delete: no count to type.
    expect(await page.$('#job-confirm-count')).to.equal(null);
    await page.click('#job-confirm');
    const cancel = await page.waitForSelector('button[data-cancel-job]');
    const runningId = (await cancel.getAttribute('data-cancel-job')) ?? '';
    await shot('jobs');
    await cancel.click();
    await page.waitForSelector(`tr[data-job="${runningId}"][data-job-state="CANCELLED"]`);
    const cancelled = await admin.get<{ state: string; matched: number; done: number; failed: number }>(`/jobs/${runningId}`);
    expect(cancelled.body.state).to.equal('CANCELLED');
    expect(cancelled.body.done + cancelled.body.failed).to.be.below(24);
  });

  it('the audit page lists an event the admin caused, filtered by target; a reader is refused with a clear message', async () => {
    const victim = await t.world.endpoint(root, { displayName: 'audited' });
    expect((await admin.delete(`/endpoint/${victim.id}`)).status).to.be.oneOf([200, 204]);
    // The audit trail is written after the answer: wait until the API lists it.
    const listed = await waitFor(
      () => admin.post<Page_<{ operation: string }>>('/audit/search-page', { criteria: { targetId: victim.id }, pageRequest: { page: 0, size: 10 } }),
      (r) => r.status === 200 && r.body.totalCount === 2, // its create (system token) and the admin's delete
      30_000,
      200,
    );
    expect(listed.met, listed.value.text).to.equal(true);
    await page.goto(`${t.url}/console#/audit`);
    await page.waitForSelector('[data-table="audit"] tbody[aria-busy="false"]');
    await page.fill('#audit-targetId', victim.id);
    await page.fill('#audit-operation', 'deleteEndpoint');
    await page.click('#audit form button[type="submit"]');
    const row = await page.waitForSelector(`tr[data-audit-event][data-target-id="${victim.id}"]`, { timeout: 30_000 });
    expect(await row.getAttribute('data-operation')).to.equal('deleteEndpoint');
    await page.waitForSelector('[data-table="audit"] .total[data-total="1"]');
    expect(await row.textContent()).to.include('(admin)');
    await page.fill('#audit-targetId', '');
    await page.fill('#audit-operation', '');
    await page.click('#audit form button[type="submit"]');
    await page.waitForSelector('[data-table="audit"] tbody tr[data-audit-event] >> nth=1');
    await shot('audit');

    await page.click('#sign-out');
    await signIn(readerToken);
    await page.goto(`${t.url}/console#/audit`);
    expect(await (await page.waitForSelector('[data-audit-refused]')).textContent()).to.match(/admin and system tokens.*403/);
    expect(await page.$('[data-table="audit"]')).to.equal(null);
    await page.click('#sign-out');
    await signIn(adminToken);
  });

  it('has no serious or critical axe-core violations on the new views, ran no foreign script and broke no CSP rule', async () => {
    expect(await b.seriousA11yViolations(t.url, ['#/endpoints/agents', '#/jobs', '#/audit'])).to.deep.equal([]);
    expect(b.cspViolations).to.deep.equal([]);
    expect(b.pageErrors).to.deep.equal([]);
  });
});
