/**
 * The console's Rollouts page in a real Chromium: a rollout halted at its canary ring shows
 * its rings as bars with their counts, the gate and the halt reason; an admin resumes and
 * aborts it after confirming. A person sees the moves only where an admin grant covers the
 * rollout's organization; a token's page keeps them and the service refuses a reader's move.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';
import { SimulatedAgents } from '../helpers/simulated-agents.js';
import { waitFor } from '../helpers/wait.js';
import { openConsoleBrowser, type ConsoleBrowser } from '../helpers/console-browser.js';

interface Rollout {
  id: string;
  state: string;
}

describe('console rollouts page in Chromium', function () {
  this.timeout(180_000);
  let t: TestApp;
  let root: string;
  let adminToken: string;
  let readerToken: string;
  let rolloutId: string;
  let b: ConsoleBrowser;
  let page: Page;

  before(async function () {
    this.timeout(300_000);
    t = await startTestApp({ ECS_INDEX_PREFIX: `${RUN_PREFIX}-zrollcon`, ECS_JOB_POLL_MS: '100' });
    root = await t.world.org();
    const canaryOrg = await t.world.org(root);
    [adminToken, readerToken] = await Promise.all([t.world.token('admin', root), t.world.token('reader', root)]);
    const ids = await SimulatedAgents.register(t.admin, canaryOrg, 3, 'v1.0.0');
    // A bad build: one agent of three comes back.
    const agents = new SimulatedAgents(t.admin, ids, (id) => (id === ids[0] ? 'report' : 'silent'));
    const res = await t.world.as(adminToken).post<Rollout>('/rollouts', {
      name: 'agent v1.1.0',
      orgId: root,
      targetVersion: { linux: 'v1.1.0' },
      rings: [{ orgIds: [canaryOrg] }, { percent: 100 }],
      soakSeconds: 0,
      gate: { minHealthyPercent: 90, withinSeconds: 1 },
      autoRollback: false,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    rolloutId = res.body.id;
    const halted = await waitFor(
      async () => (await agents.pass(), (await t.admin.get<Rollout>(`/rollouts/${rolloutId}`)).body),
      (r) => r.state === 'HALTED',
      60_000,
      50,
    );
    expect(halted.met, JSON.stringify(halted.value)).to.equal(true);
    b = await openConsoleBrowser();
    page = b.page;
  });

  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('shows the rings as bars with their counts, the gate and the halt reason', async () => {
    await b.signIn(t.url, adminToken);
    await page.waitForSelector('#scope-org');
    await page.goto(`${t.url}/console#/rollouts`);
    const card = `[data-rollout="${rolloutId}"]`;
    await page.waitForSelector(`${card}[data-rollout-state="HALTED"]`);
    expect(await page.getAttribute(`${card} [data-ring="1"]`, 'data-ring-state')).to.equal('FAILED');
    expect(await page.getAttribute(`${card} [data-ring="1"] [data-ring-counts]`, 'data-ring-counts')).to.equal('1/1/2/0/3');
    expect(await page.getAttribute(`${card} [data-ring="2"]`, 'data-ring-state')).to.equal('PENDING');
    expect(await page.$$eval(`${card} [data-ring="1"] [data-seg]`, (els) => els.map((e) => e.getAttribute('data-seg')))).to.deep.equal(['healthy', 'failed']);
    expect(await page.textContent(`${card} [data-rollout-reason]`)).to.match(/Halt reason:.*ring 1: 33\.3 % healthy of 3, gate 90 %/);
    expect(await page.textContent(card)).to.contain('gate 90 % healthy within 1 s');
    await b.shot('rollouts-halted');
  });

  it('resumes and aborts after confirmation; cancelling a confirmation changes nothing', async () => {
    const card = `[data-rollout="${rolloutId}"]`;
    await page.click(`${card} [data-rollout-move="abort"]`);
    await page.click(`${card} [data-rollout-confirm-no]`);
    expect((await t.admin.get<Rollout>(`/rollouts/${rolloutId}`)).body.state).to.equal('HALTED');
    await page.click(`${card} [data-rollout-move="resume"]`);
    await page.click(`${card} [data-rollout-confirm-yes]`);
    // Resumed, the failed ring is judged again and halts again (its agents still do not come back).
    const resumed = await waitFor(() => t.admin.get<Rollout>(`/rollouts/${rolloutId}`), (r) => r.body.state !== 'HALTED', 10_000, 20);
    expect(['RUNNING', 'HALTED']).to.include(resumed.value.body.state);
    await page.waitForSelector(`${card}[data-rollout-state="HALTED"] [data-rollout-move="abort"]`, { timeout: 30_000 });
    await page.click(`${card} [data-rollout-move="abort"]`);
    await page.click(`${card} [data-rollout-confirm-yes]`);
    await page.waitForSelector(`${card}[data-rollout-state="ABORTED"]`);
    expect((await t.admin.get<Rollout>(`/rollouts/${rolloutId}`)).body.state).to.equal('ABORTED');
  });

  it("a reader token's page keeps the controls and the service refuses the move (403), shown on the page", async () => {
    await page.click('#sign-out');
    await b.signIn(t.url, readerToken);
    await page.waitForSelector('#scope-org');
    await page.goto(`${t.url}/console#/rollouts`);
    const card = `[data-rollout="${rolloutId}"]`;
    await page.click(`${card} [data-rollout-move="rollback"]`);
    await page.click(`${card} [data-rollout-confirm-yes]`);
    await page.waitForSelector(`${card} .message.error`);
    expect(await page.textContent(`${card} .message.error`)).to.match(/403|may not|outside/i);
    expect((await t.admin.get<Rollout>(`/rollouts/${rolloutId}`)).body.state).to.equal('ABORTED');
  });
});
