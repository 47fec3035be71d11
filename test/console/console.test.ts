/**
 * The operator console in a real Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core) against the real service and Elasticsearch, with real tokens; the fleet is
 * seeded through the API. Screenshots of the main views land in .local/console-screenshots/.
 */
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { CONSOLE_CSP } from '../../src/http/console.js';
import type { Api } from '../helpers/http.js';
import { startTestApp, uid, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { openConsoleBrowser, SHOTS, type ConsoleBrowser } from '../helpers/console-browser.js';

const XSS = '<img src=x onerror=alert(1)>';
const STATUSES = ['CONNECTED', 'POTENTIALLY_DISCONNECTED', 'DISCONNECTED', 'NEVER', 'UNINSTALLED'] as const;
const LICENSE_STATES = ['CREATED', 'ACTIVATED', 'REVOKED', 'DEACTIVATED', 'EXPIRED'] as const;

interface Bucket {
  key: string;
  count: number;
}

/** A fleet: a root MSP with a customer below it, and another tenant the root's token must not see. */
interface Fleet {
  root: string;
  child: string;
  other: string;
  rootAdmin: Api;
  rootToken: string;
  readerToken: string;
  otherEndpoint: string;
  xssEndpoint: string;
  commandEndpoint: string;
  createdLicense: string;
  agentsInRoot: number;
}

async function inBatches<T>(n: number, make: (i: number) => Promise<T>, batch = 12): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += batch) out.push(...(await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, k) => make(i + k)))));
  return out;
}

async function seed(t: TestApp): Promise<Fleet> {
  const root = await t.world.org();
  const [child, other] = await Promise.all([t.world.org(root), t.world.org()]);
  const [rootToken, readerToken] = await Promise.all([t.world.token('admin', root), t.world.token('reader', root)]);
  const rootAdmin = t.world.as(rootToken);
  const oses = ['windows', 'linux', 'darwin'];
  const agentsInRoot = 45;
  const agents = await inBatches(agentsInRoot, (i) =>
    t.world.endpoint(root, { displayName: `agent-${String(i).padStart(3, '0')}`, hostInfo: { os: oses[i % 3], hostName: `host-${i}` } }),
  );
  await inBatches(12, (i) => t.world.endpoint(child, { displayName: `child-agent-${i}`, hostInfo: { os: oses[(i + 1) % 3], hostName: `c-host-${i}` } }));
  const xss = await t.world.endpoint(root, { displayName: XSS, hostInfo: { os: 'windows', hostName: 'xss-host' } });
  const models = ['MX64', 'MX68', 'MX84'];
  const utms = await inBatches(30, (i) => t.world.utm(i < 22 ? root : child, { displayName: `utm-${i}`, model: models[i % 3] }));
  await inBatches(utms.length, (i) => t.admin.patch(`/utm-endpoint/${utms[i].id}/connectionStatus/${STATUSES[i % 4]}`));
  await inBatches(9, (i) => t.world.lte(i < 6 ? root : child, { displayName: `lte-${i}`, imei: uid('35'), dataUsage: 1000 * (i + 1) }));
  const otherEp = await t.world.endpoint(other, { displayName: 'not yours' });
  // Licenses in every state (paths through the state machine), some in the child.
  const paths: Record<(typeof LICENSE_STATES)[number], string[]> = {
    CREATED: [],
    ACTIVATED: ['ACTIVATED'],
    DEACTIVATED: ['ACTIVATED', 'DEACTIVATED'],
    REVOKED: ['ACTIVATED', 'REVOKED'],
    EXPIRED: ['ACTIVATED', 'EXPIRED'],
  };
  let createdLicense = '';
  await inBatches(15, async (i) => {
    const state = LICENSE_STATES[i % 5];
    const id = uid('lic');
    const put = await rootAdmin.put(`/license/${id}`, { type: 'ATC', orgId: i < 12 ? root : child, ownerId: agents[1].id });
    expect(put.status, put.text).to.equal(200);
    for (const s of paths[state]) expect((await rootAdmin.patch(`/license/${id}/state/${s}`)).status).to.equal(200);
    if (state === 'CREATED' && i < 12) createdLicense = id;
  });
  // Software on some agents of the root.
  await inBatches(10, (i) =>
    rootAdmin.post(`/endpoint/${agents[i].id}/software-inventory`, [
      { name: 'Firefox', version: '120.0', vendor: 'Mozilla' },
      ...(i < 6 ? [{ name: 'Zoom', version: '5.17', vendor: 'Zoom' }] : []),
      ...(i < 3 ? [{ name: 'Slack', version: '4.36', vendor: 'Slack' }] : []),
    ]),
  );
  return {
    root,
    child,
    other,
    rootAdmin,
    rootToken,
    readerToken,
    otherEndpoint: otherEp.id,
    xssEndpoint: xss.id,
    commandEndpoint: agents[1].id,
    createdLicense,
    agentsInRoot: agentsInRoot + 1,
  };
}

/** What the API answers for the overview's figures of a scope (the console must show the same). */
async function apiFigures(api: Api, orgId: string, coversAll: boolean): Promise<Record<string, Bucket[]>> {
  const one = { page: 0, size: 1 };
  const count = async (p: string, body: unknown) => {
    const r = await api.post<{ count: number }>(p, body);
    expect(r.status, r.text).to.equal(200);
    return r.body.count;
  };
  const total = async (p: string, body: unknown) => {
    const r = await api.post<{ totalCount: number }>(p, body);
    expect(r.status, r.text).to.equal(200);
    return r.body.totalCount;
  };
  const scoped = { orgId, includeChildren: true };
  const single = coversAll ? {} : { orgId };
  const agentStatuses = await api.post<Bucket[]>('/endpoint/connection-status/aggregation', single);
  const utmStatuses = await api.post<Bucket[]>('/utm-endpoint/connection-status/aggregation', scoped);
  expect(agentStatuses.status, agentStatuses.text).to.equal(200);
  expect(utmStatuses.status, utmStatuses.text).to.equal(200);
  const statuses = {
    body: [
      ...agentStatuses.body.map((b) => ({ family: 'agent', connectionStatus: b.key, count: b.count })),
      ...utmStatuses.body.map((b) => ({ family: 'utm', connectionStatus: b.key, count: b.count })),
    ],
  };
  // The extension agrees with the spec's own UTM count for every status.
  for (const s of STATUSES) {
    const utm = statuses.body.find((b) => b.family === 'utm' && b.connectionStatus === s)?.count ?? 0;
    expect(await count('/utm-endpoint/count', { ...scoped, connectionStatuses: [s] }), s).to.equal(utm);
  }
  const os = await api.post<Bucket[]>('/report/host-info/aggregation', { column: 'os', orgIds: coversAll ? [] : [orgId] });
  const models = await api.post<Bucket[]>('/utm-endpoint/model/aggregation', scoped);
  const usage = await api.get('/lte-endpoint/data-usage-sum');
  const software = await api.post<{ items: { name: string; version: string; count: number }[] }>(`/org/${orgId}/software-inventory-summary/search-page`, {
    criteria: {},
    pageRequest: { page: 0, size: 10, sort: [{ field: 'count', direction: 'DESC' }] },
  });
  return {
    'endpoints-by-type': [
      { key: 'agents (VC_ENDPOINT)', count: await total('/endpoint/page-search', { criteria: single, pageRequest: one }) },
      { key: 'UTM', count: await total('/utm-endpoint/searchPage', { criteria: scoped, pageRequest: one }) },
      { key: 'LTE (VC_LTE)', count: await total('/lte-endpoint/search', { criteria: scoped, pageRequest: one }) },
    ],
    'endpoints-by-status': statuses.body.map((b) => ({ key: `${b.family} ${b.connectionStatus}`, count: b.count })),
    'agents-by-os': os.body,
    'utm-by-model': models.body,
    'lte-data-usage': [{ key: 'dataUsage', count: Number(usage.text) }],
    'licenses-by-state': await Promise.all(LICENSE_STATES.map(async (s) => ({ key: s, count: await count('/license/count', { state: s, ...single }) }))),
    'top-software': software.body.items.map((s) => ({ key: `${s.name} ${s.version}`, count: s.count })),
  };
}

/** The figures a chart shows (its accessible table's data attributes). */
async function chartFigures(page: Page, chart: string): Promise<Bucket[]> {
  await page.waitForSelector(`[data-chart="${chart}"][data-ready="true"]`);
  return page.$$eval(`[data-chart="${chart}"] tbody tr[data-key]`, (rows) =>
    rows.map((r) => ({ key: r.getAttribute('data-key') ?? '', count: Number(r.getAttribute('data-count')) })),
  );
}

const sortBuckets = (b: Bucket[]) => [...b].sort((x, y) => x.key.localeCompare(y.key));

describe('operator console in Chromium', function () {
  this.timeout(120_000);
  let t: TestApp;
  let fleet: Fleet;
  let b: ConsoleBrowser;
  let page: Page;
  const shot = (name: string): Promise<void> => b.shot(name);
  const signIn = (token: string): Promise<void> => b.signIn(t.url, token);

  before(async function () {
    this.timeout(300_000);
    t = await startTestApp();
    fleet = await seed(t);
    b = await openConsoleBrowser();
    page = b.page;
  });

  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('serves the console with a strict CSP, nosniff, no framing, a no-cache page and immutable hashed assets', async () => {
    const res = await fetch(`${t.url}/console`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-security-policy')).to.equal(CONSOLE_CSP);
    expect(CONSOLE_CSP).to.not.include('unsafe-inline');
    expect(CONSOLE_CSP).to.include("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('cache-control')).to.equal('no-cache');
    const html = await res.text();
    const js = /src="(\/console\/assets\/main-[\w]+\.js)"/.exec(html)?.[1];
    const css = /href="(\/console\/assets\/main-[\w]+\.css)"/.exec(html)?.[1];
    expect(js, html).to.be.a('string');
    expect(css, html).to.be.a('string');
    for (const asset of [js, css]) {
      const a = await fetch(`${t.url}${asset}`);
      expect(a.status).to.equal(200);
      expect(a.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(a.headers.get('x-content-type-options')).to.equal('nosniff');
    }
    expect(html).to.not.match(/https?:\/\//);
    expect((await fetch(`${t.url}/console/assets/main-NOPE.js`)).status).to.equal(404);
  });

  it('refuses a wrong token with a clear message, and keeps the token in sessionStorage only', async () => {
    await signIn('not-a-real-token');
    const msg = await page.waitForSelector('[data-testid="sign-in-error"]');
    expect(await msg.textContent()).to.match(/401/);
    await shot('sign-in-refused');
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
    await signIn(fleet.rootToken);
    await page.waitForSelector('#scope-org');
    expect(page.url()).to.not.include(fleet.rootToken);
    const stored = await page.evaluate<{ session: string[]; local: number; cookies: string }>(
      '({ session: Object.values(sessionStorage), local: localStorage.length, cookies: document.cookie })',
    );
    expect(stored.session).to.deep.equal([fleet.rootToken]);
    expect(stored.local).to.equal(0);
    expect(stored.cookies).to.equal('');
  });

  it('offers only the own subtree in the scope picker', async () => {
    const options = await page.$$eval('#scope-org option', (os) => os.map((o) => o.getAttribute('value') ?? ''));
    expect(options).to.deep.equal([fleet.root, fleet.child]);
  });

  it("shows overview figures equal to the API's answers for the whole subtree (and measures the render)", async () => {
    // A fresh document: the time runs from navigation (bundle, scope tree, then the overview's requests).
    await page.goto('about:blank');
    const started = Date.now();
    await page.goto(`${t.url}/console#/overview`);
    await page.waitForSelector('#overview[data-render-ms]:not([data-render-ms=""])');
    const wallMs = Date.now() - started;
    const renderMs = Number(await page.getAttribute('#overview', 'data-render-ms'));
    // The mark bench/console.ts times the drawn charts by (ms since navigation start).
    const drawnAt = await page.evaluate<number[]>("performance.getEntriesByName('overview-drawn').map((m) => m.startTime)");
    expect(drawnAt).to.have.length(1);
    expect(drawnAt[0]).to.be.within(renderMs - 1, wallMs);
    console.log(`      overview: ${renderMs} ms from its requests to the drawn charts, ${wallMs} ms from navigation, for ${fleet.agentsInRoot + 12} agents, 30 UTM, 9 LTE`);
    const expected = await apiFigures(fleet.rootAdmin, fleet.root, true);
    for (const [chart, buckets] of Object.entries(expected)) {
      expect(sortBuckets(await chartFigures(page, chart)), chart).to.deep.equal(sortBuckets(buckets));
    }
    // Independently of the mapping: the seeded fleet.
    expect(expected['endpoints-by-status'].find((b) => b.key === 'utm CONNECTED')?.count).to.equal(8);
    expect(expected['endpoints-by-status'].find((b) => b.key === 'agent NEVER')?.count).to.equal(fleet.agentsInRoot + 12);
    expect(expected['endpoints-by-type'][0].count).to.equal(fleet.agentsInRoot + 12);
    expect(expected['top-software'][0]).to.deep.equal({ key: 'Firefox 120.0', count: 10 });
    await shot('overview');
  });

  it("switches scope to the child organization: the figures follow, equal to the API's", async () => {
    await page.selectOption('#scope-org', fleet.child);
    await page.waitForSelector('#overview[data-render-ms]:not([data-render-ms=""])');
    const expected = await apiFigures(fleet.rootAdmin, fleet.child, false);
    expect(expected['endpoints-by-type'][1].count).to.equal(8);
    for (const [chart, buckets] of Object.entries(expected)) {
      const shown = await waitFor(
        () => chartFigures(page, chart),
        (b) => JSON.stringify(sortBuckets(b)) === JSON.stringify(sortBuckets(buckets)),
        5000,
        50,
      );
      expect(sortBuckets(shown.value), chart).to.deep.equal(sortBuckets(buckets));
    }
    await page.selectOption('#scope-org', fleet.root);
    await page.waitForSelector('#overview[data-render-ms]:not([data-render-ms=""])');
  });

  it('searches, pages and sorts the agents with the totals', async () => {
    await page.goto(`${t.url}/console#/endpoints/agents`);
    const totalOf = async () => Number(await (await page.waitForSelector('[data-table="agents"] .total[data-total]:not([data-total=""])')).getAttribute('data-total'));
    const all = await fleet.rootAdmin.post<{ totalCount: number; items: { displayName: string }[] }>('/endpoint/page-search', {
      criteria: {},
      pageRequest: { page: 0, size: 20, sort: [{ field: 'displayName', direction: 'DESC' }] },
    });
    expect(await totalOf()).to.equal(all.body.totalCount);
    expect(all.body.totalCount).to.equal(fleet.agentsInRoot + 12);
    const rowNames = () => page.$$eval('[data-table="agents"] tbody tr[data-row] td:first-child', (tds) => tds.map((td) => td.textContent ?? ''));
    expect((await waitFor(rowNames, (n) => n.length === 20, 5000, 50)).met, 'first page rows').to.equal(true);
    expect(await page.textContent('[data-table="agents"] [data-page-of]')).to.equal('Page 1 of 3');
    await page.click('[data-table="agents"] button[data-page="next"]');
    await page.waitForSelector('[data-table="agents"] [data-page-of="2/3"]');
    await page.waitForSelector('[data-table="agents"] tbody[aria-busy="false"]');
    expect((await waitFor(rowNames, (n) => n.length === 20, 5000, 50)).met, 'second page rows').to.equal(true);
    // Sort by name, descending: the API's own first page in that order.
    await page.click('[data-table="agents"] button[data-sort="displayName"]');
    await page.waitForSelector('[data-table="agents"] th[aria-sort="descending"]');
    await page.waitForSelector('[data-table="agents"] [data-page-of="1/3"]');
    await page.waitForSelector('[data-table="agents"] tbody[aria-busy="false"]');
    // The rows of the sorted page replace the previous ones once its answer is rendered.
    const expected = all.body.items.map((i) => i.displayName);
    const sorted = await waitFor(rowNames, (n) => JSON.stringify(n) === JSON.stringify(expected), 5000, 50);
    expect(sorted.value).to.deep.equal(expected);
    // Text search narrows to one agent.
    await page.fill('#agent-search', 'agent-007');
    await page.press('#agent-search', 'Enter');
    await waitFor(rowNames, (n) => n.length === 1, 5000, 50);
    expect(await rowNames()).to.deep.equal(['agent-007']);
    expect(await totalOf()).to.equal(1);
    await page.fill('#agent-search', '');
    await page.press('#agent-search', 'Enter');
    await waitFor(totalOf, (n) => n > 1, 5000, 50);
    await shot('endpoints-agents');
    // UTM table with a status criterion.
    await page.click('a[data-family="utm"]');
    await page.selectOption('#utm-status', 'CONNECTED');
    await waitFor(
      async () => Number(await page.getAttribute('[data-table="utm"] .total', 'data-total')),
      (n) => n === 8,
      5000,
      50,
    );
    await shot('endpoints-utm');
  });

  it('renders an endpoint named like markup as text; no script runs', async () => {
    await page.goto(`${t.url}/console#/endpoints/agents`);
    await page.waitForSelector('[data-table="agents"] tbody[aria-busy="false"] tr[data-row]');
    await page.fill('#agent-search', 'xss-host');
    await page.press('#agent-search', 'Enter');
    await page.waitForSelector('[data-table="agents"] .total[data-total="1"]');
    const link = page.locator(`a[data-open="${fleet.xssEndpoint}"]`);
    expect(await link.textContent()).to.equal(XSS);
    await link.click();
    const title = await page.waitForSelector('#endpoint-title[data-endpoint-name]:not([data-endpoint-name=""])');
    expect(await title.textContent()).to.equal(XSS);
    expect(await page.$$('img')).to.have.length(0);
    expect(b.dialogs).to.deep.equal([]);
  });

  it('opens an endpoint: fields, modules, licenses, commands, software; sends a command and watches its status', async () => {
    await page.goto(`${t.url}/console#/endpoint/${fleet.commandEndpoint}`);
    await page.waitForSelector('#endpoint-title[data-endpoint-name="agent-001"]');
    expect(await page.textContent('[data-field="id"] dd')).to.equal(fleet.commandEndpoint);
    await page.waitForSelector('#modules tr[data-module="fim"]');
    await page.waitForSelector('[data-owned-licenses]:not([data-owned-licenses=""])');
    await page.waitForSelector('#software-inventory tbody tr');
    // No agent holds the channel: the page says so, and no delivery yet.
    expect(await (await page.waitForSelector('#channel [data-field="channel"] dd')).textContent()).to.equal('none held');
    expect(await page.textContent('#channel [data-field="lastDeliveryLatency"] dd')).to.equal('none yet');
    // Enable a module (creates the record), then disable it.
    await page.click('#modules tr[data-module="fim"] button');
    await page.waitForSelector('#modules tr[data-module="fim"][data-state="ACTIVE"]');
    await page.click('#modules tr[data-module="fim"] button');
    await page.waitForSelector('#modules tr[data-module="fim"][data-state="INACTIVE"]');
    const modules = await fleet.rootAdmin.get<Record<string, unknown>>(`/endpoint/${fleet.commandEndpoint}/enabled-modules`);
    expect(modules.body.fim).to.equal('INACTIVE');
    expect(await page.getAttribute('[data-owned-licenses]', 'data-owned-licenses')).to.equal('15');
    // Someone else changes the modules behind the console's back: its next write is refused, not applied.
    const { createdBy: _c, updatedBy: _u, createdAt: _ca, updatedAt: _ua, ...record } = modules.body;
    expect((await fleet.rootAdmin.put(`/endpoint/${fleet.commandEndpoint}/enabled-modules`, { ...record, wel: 'ACTIVE' })).status).to.equal(200);
    await page.click('#modules tr[data-module="fim"] button');
    expect(await (await page.waitForSelector('[data-testid="modules-error"]')).textContent()).to.match(/409\): reload/);
    expect((await fleet.rootAdmin.get<Record<string, unknown>>(`/endpoint/${fleet.commandEndpoint}/enabled-modules`)).body.fim).to.equal('INACTIVE');
    await page.click('#modules-reload');
    await page.waitForSelector('#modules tr[data-module="wel"][data-state="ACTIVE"]');
    // Send a command; the agent side marks it SENT; the console shows the change.
    await page.fill('#command-name', 'ping');
    await page.click('#commands button[type="submit"]');
    const watched = await page.waitForSelector('[data-watched-command][data-command-status="CREATED"]');
    const id = (await watched.getAttribute('data-watched-command')) ?? '';
    expect((await fleet.rootAdmin.patch(`/command-message/${id}/status/SENT`)).status).to.equal(200);
    await page.waitForSelector(`[data-watched-command="${id}"][data-command-status="SENT"]`, { timeout: 10_000 });
    await page.waitForSelector(`#commands tr[data-command="${id}"]`);
    await shot('endpoint-detail');
  });

  it("shows the license state machine's refusal as a message", async () => {
    await page.fill('#license-id', fleet.createdLicense);
    await page.click('#licenses button[type="submit"]');
    await page.waitForSelector(`[data-license="${fleet.createdLicense}"][data-license-state="CREATED"]`);
    await page.click('#licenses button:has-text("Deactivate")');
    const msg = await page.waitForSelector('[data-testid="license-error"]');
    expect(await msg.textContent()).to.match(/^Refused \(409\)/);
    await (await page.$('#licenses'))?.screenshot({ path: path.join(SHOTS, 'license-refusal.png') });
    await page.click('#licenses button:has-text("Activate")');
    await page.waitForSelector(`[data-license="${fleet.createdLicense}"][data-license-state="ACTIVATED"]`);
  });

  it('shows a 403 for an endpoint outside the own subtree', async () => {
    await page.goto(`${t.url}/console#/endpoint/${fleet.otherEndpoint}`);
    const msg = await page.waitForSelector('[data-testid="endpoint-error"]');
    expect(await msg.textContent()).to.match(/^Not allowed \(403\)/);
    expect(await page.textContent('body')).to.not.include('not yours');
  });

  it('lists the software titles with host counts and the hosts having one', async () => {
    await page.goto(`${t.url}/console#/software`);
    const firefox = await page.waitForSelector('button[data-title="Firefox 120.0"]');
    const row = await page.evaluate<string[][]>(
      `Array.from(document.querySelectorAll('[data-table="software-summary"] tbody tr[data-row]')).map((r) => Array.from(r.children).map((c) => c.textContent))`,
    );
    expect(row[0]).to.deep.equal(['Firefox', '120.0', '10']);
    await firefox.click();
    expect(await (await page.waitForSelector('[data-host-count]')).getAttribute('data-host-count')).to.equal('10');
    await shot('software');
  });

  it('subscribes and unsubscribes a bundle and fetches an installer link', async () => {
    const catalogue = await fleet.rootAdmin.get<{ id: string; name: string }[]>('/bundle');
    await page.goto(`${t.url}/console#/organization`);
    await page.waitForSelector('#installer-title');
    if (catalogue.body.length > 0) {
      const b = catalogue.body[0];
      await page.click(`tr[data-bundle="${b.id}"] button`);
      await page.waitForSelector(`tr[data-bundle="${b.id}"][data-subscribed="true"]`);
      await page.click(`tr[data-bundle="${b.id}"] button`);
      await page.waitForSelector(`tr[data-bundle="${b.id}"][data-subscribed="false"]`);
    }
    await page.click('button:has-text("Get linux installer link")');
    const link = await page.waitForSelector('a[data-installer="linux"]');
    expect(await link.getAttribute('href')).to.match(/^https?:\/\//);
    await shot('organization');
  });

  it('works with the keyboard alone: skip link, main navigation, sorting, opening a row', async () => {
    await page.goto(`${t.url}/console#/overview`);
    await page.waitForSelector('#overview[data-render-ms]:not([data-render-ms=""])');
    // The focused element as "tag|text|data-sort|data-open".
    const focused = () =>
      page.evaluate<string>(
        `(() => { const a = document.activeElement; return a ? [a.tagName.toLowerCase(), (a.textContent ?? '').trim(), a.getAttribute('data-sort') ?? '', a.getAttribute('data-open') ?? ''].join('|') : ''; })()`,
      );
    const tabTo = async (match: (f: string) => boolean) => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab');
        if (match(await focused())) return;
      }
      throw new Error(`focus never reached the target; last ${await focused()}`);
    };
    await page.evaluate('document.activeElement?.blur()');
    await tabTo((f) => f.startsWith('a|Skip to content'));
    await tabTo((f) => f === 'a|Endpoints||');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-table="agents"] tbody[aria-busy="false"] tr[data-row]');
    await tabTo((f) => f.startsWith('button|') && f.endsWith('|displayName|'));
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-table="agents"] th[aria-sort="descending"]');
    await tabTo((f) => f.startsWith('a|') && !f.endsWith('|'));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#endpoint-title[data-endpoint-name]:not([data-endpoint-name=""])');
    await page.waitForFunction("document.activeElement?.id === 'endpoint-title'");
    await tabTo((f) => f === 'a|Software||');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-table="software-summary"] tbody tr[data-row]');
  });

  it('has no serious or critical axe-core violations on the main views', async () => {
    const views = ['#/overview', '#/endpoints/agents', `#/endpoint/${fleet.commandEndpoint}`, '#/software', '#/organization'];
    expect(await b.seriousA11yViolations(t.url, views)).to.deep.equal([]);
  });

  it('a reader is refused writes with a 403 message; signing out forgets the token', async () => {
    await page.click('#sign-out');
    await signIn(fleet.readerToken);
    await page.waitForSelector('#scope-org');
    await page.goto(`${t.url}/console#/endpoint/${fleet.commandEndpoint}`);
    await page.fill('#command-name', 'ping');
    await page.click('#commands button[type="submit"]');
    expect(await (await page.waitForSelector('[data-testid="command-error"]')).textContent()).to.match(/^Not allowed \(403\)/);
    await page.click('#sign-out');
    await page.waitForSelector('#token');
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
  });

  it('ran no script the page did not ship and broke no CSP rule', () => {
    expect(b.dialogs).to.deep.equal([]);
    expect(b.cspViolations).to.deep.equal([]);
    expect(b.pageErrors).to.deep.equal([]);
  });
});
