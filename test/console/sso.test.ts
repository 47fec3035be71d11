/**
 * Single sign-on against a real Keycloak (src/dev/local-keycloak.ts), driven through Keycloak's
 * own login page by a real Chromium: grants from the `ecs_roles` claim decide what a person sees
 * and may do; sign-out, back-channel logout and the cross-site rule end or refuse access; a
 * session outlives a restart and is honoured by another instance; a realm made through the admin
 * API, with the claim in userinfo only, works as the repository's does.
 *
 * Each case makes its own people at Keycloak (admin API), its own organizations and devices, and
 * its own browser context, so no case sees a Keycloak session, a login session or a record of
 * another, whatever their order.
 */
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { freePort } from '../../src/dev/local-elasticsearch.js';
import { CLIENT_ID, CLIENT_SECRET, KeycloakAdmin, testKeycloak, type Person } from '../helpers/keycloak.js';
import { waitFor } from '../helpers/wait.js';
import { API_PREFIX } from '../../src/http/routes.js';
import { buildConsole } from '../../scripts/build-console.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Keycloak's pages and its back-channel calls on a loaded machine: generous, but bounded. */
const KEYCLOAK_MS = 90_000;

interface Answer {
  status: number;
  body: unknown;
}

/** Fills Keycloak's login form as the person and submits it. */
async function submitLogin(page: Page, person: Person): Promise<void> {
  await page.waitForSelector('#username', { timeout: KEYCLOAK_MS });
  await page.fill('#username', person.username);
  await page.fill('#password', person.password);
  await page.click('#kc-login');
}

/** A person's browser: its own context (cookies), signed in through Keycloak's login page. */
class PersonBrowser {
  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(browser: Browser): Promise<PersonBrowser> {
    const context = await browser.newContext();
    return new PersonBrowser(context, await context.newPage());
  }

  /** Starts at the service's /auth/login, fills Keycloak's form, and returns the page the browser lands on. */
  async signIn(base: string, person: Person): Promise<{ status: number; url: string; text: string }> {
    await this.page.goto(`${base}/auth/login?return=${encodeURIComponent('/console#/overview')}`);
    const [response] = await Promise.all([
      this.page.waitForResponse((r) => r.url().startsWith(`${base}/auth/callback`), { timeout: KEYCLOAK_MS }),
      submitLogin(this.page, person),
    ]);
    await this.page.waitForLoadState('domcontentloaded');
    return { status: response.status(), url: this.page.url(), text: await this.page.innerText('body').catch(() => '') };
  }

  /** Signs in and asserts that the service let the person in (302 to the console). */
  async signedIn(base: string, person: Person): Promise<string> {
    const landed = await this.signIn(base, person);
    expect(landed.status, landed.text).to.equal(302);
    expect(landed.url).to.equal(`${base}/console#/overview`);
    const cookie = await this.sessionCookie();
    expect(cookie, 'no session cookie after sign-in').to.be.a('string');
    return cookie as string;
  }

  /** The session cookie's value (for calls from outside the browser: another instance, after a restart). */
  async sessionCookie(): Promise<string | undefined> {
    return (await this.context.cookies()).find((c) => c.name === 'ecs_session')?.value;
  }

  /** A same-origin fetch from the page (cookie sent by the browser); `csrf` adds the session's token. */
  async call(base: string, method: string, path: string, body?: unknown, opts: { csrf?: boolean } = { csrf: true }): Promise<Answer> {
    // The service's own pages (/auth/…) allow no scripts' requests (their CSP): call from a plain answer of the service.
    if (!this.page.url().startsWith(base) || this.page.url().startsWith(`${base}/auth/`)) await this.page.goto(`${base}/health/live`);
    return this.page.evaluate(
      async ({ method, path, body, csrf }) => {
        const headers: Record<string, string> = {};
        if (csrf) {
          const s = await fetch('/auth/session');
          if (s.ok) headers['x-csrf-token'] = ((await s.json()) as { csrfToken: string }).csrfToken;
        }
        if (body !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        return { status: res.status, body: parsed };
      },
      { method, path, body, csrf: opts.csrf ?? true },
    );
  }

  /** The ids of the agents the person's search finds. */
  async agentIds(base: string): Promise<string[]> {
    const page = await this.call(base, 'POST', `${API_PREFIX}/endpoint/page-search`, { criteria: {}, pageRequest: { size: 100 } });
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    return ((page.body as { items: { id: string }[] }).items ?? []).map((i) => i.id).sort();
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/** A call from outside any browser, carrying a session cookie. */
async function withCookie(base: string, cookie: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...headers, cookie: `ecs_session=${cookie}` } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Whether the console's page of an endpoint offers to send it a command (once the page has loaded the endpoint and the organizations). */
async function sendCommandOffered(page: Page, base: string, endpointId: string): Promise<boolean> {
  await page.goto(`${base}/console#/endpoint/${encodeURIComponent(endpointId)}`);
  await page.waitForSelector('#commands', { timeout: 60_000 });
  await page.waitForSelector('#scope-org', { timeout: 60_000 });
  return (await page.$('#commands button[type="submit"]')) !== null;
}

/** Waits until the session cookie no longer opens a session at `base`. */
async function sessionEnds(base: string, cookie: string, deadlineMs: number): Promise<boolean> {
  return (await waitFor(() => withCookie(base, cookie, 'GET', '/auth/session'), (a) => a.status === 401, deadlineMs, 100)).met;
}

/** A managed-security provider with two customers and an unrelated tenant, one agent each, all of one case's own. */
interface Customers {
  acme: string;
  beta: string;
  agents: { acme: string; beta: string; other: string };
  names: { acme: string; beta: string; other: string };
}

async function customers(app: TestApp): Promise<Customers> {
  const w = app.world;
  const msp = await w.org();
  const [acme, beta, other] = await Promise.all([w.org(msp, uid('acme')), w.org(msp, uid('beta')), w.org()]);
  const names = { acme: uid('acme-agent'), beta: uid('beta-agent'), other: uid('other-agent') };
  const [a, b, o] = await Promise.all([w.endpoint(acme, { displayName: names.acme }), w.endpoint(beta, { displayName: names.beta }), w.endpoint(other, { displayName: names.other })]);
  return { acme, beta, agents: { acme: a.id, beta: b.id, other: o.id }, names };
}

describe('Single sign-on with Keycloak', function () {
  // Each case signs in through Keycloak's pages and some start instances of the service: slow on a loaded machine.
  this.timeout(300_000);
  let kc: KeycloakAdmin;
  let base: string;
  /** An instance of the case that restarts the service: its own port, so the shared instance never goes away. */
  let restartBase: string;
  /** An instance that asks Keycloak again every second (the shared one keeps the default, so a back-channel logout alone ends its sessions). */
  let recheckBase: string;
  let app: TestApp;
  let browser: Browser;

  const ssoEnv = (publicUrl: string): Record<string, string> => ({
    PORT: new URL(publicUrl).port,
    ECS_OIDC_ISSUER: kc.issuer,
    ECS_OIDC_CLIENT_ID: CLIENT_ID,
    ECS_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    ECS_PUBLIC_URL: publicUrl,
  });

  before(async function () {
    // A cold Keycloak on a loaded machine: minutes (its start is condition-bound, not a sleep).
    this.timeout(900_000);
    kc = new KeycloakAdmin(await testKeycloak());
    base = `http://127.0.0.1:${await freePort()}`;
    restartBase = `http://127.0.0.1:${await freePort()}`;
    recheckBase = `http://127.0.0.1:${await freePort()}`;
    await kc.aimClient({ publicUrl: base, alsoAt: [restartBase, recheckBase] });
    app = await startTestApp(ssoEnv(base));
    await buildConsole();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('signs an admin of one customer in through the login page and shows only that customer’s fleet, in the console and the API', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`admin@${c.acme}`], 'admin');
    const b = await PersonBrowser.open(browser);
    try {
      await b.signedIn(base, person);
      await b.page.goto(`${base}/console#/endpoints/agents`);
      await b.page.waitForSelector('[data-table="agents"] tbody[aria-busy="false"] tr[data-row]', { timeout: 60_000 });
      const rows = await b.page.$$eval('[data-table="agents"] tbody tr[data-row] td:first-child', (tds) => tds.map((td) => td.textContent ?? ''));
      expect(rows).to.deep.equal([c.names.acme]);
      expect(await b.page.innerText('[data-testid="signed-in-as"]')).to.equal(person.name);

      const session = await b.call(base, 'GET', '/auth/session');
      expect(session.status).to.equal(200);
      expect(session.body).to.include({ email: person.email, name: person.name });
      expect((session.body as { grants: unknown }).grants).to.deep.equal([{ role: 'admin', orgId: c.acme }]);
      expect((session.body as { csrfToken: string }).csrfToken).to.be.a('string').with.length.above(20);
      expect(await b.agentIds(base)).to.deep.equal([c.agents.acme]);
      const created = await b.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.acme, displayName: 'made-by-the-admin' });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      expect((created.body as { createdBy: { username: string } }).createdBy.username).to.equal(person.email);
      const elsewhere = await b.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.beta, displayName: 'not-theirs' });
      expectErrorBody(elsewhere, 403, `${API_PREFIX}/endpoint`);
      const cookie = (await b.context.cookies()).find((k) => k.name === 'ecs_session');
      expect(cookie?.httpOnly).to.equal(true);
      expect(cookie?.sameSite).to.equal('Lax');
    } finally {
      await b.close();
    }
  });

  it('lets a reader read but not act, and a person with two grants act only where they are admin', async () => {
    const c = await customers(app);
    const reader = await kc.createPerson([`reader@${c.acme}`], 'reader');
    const mixed = await kc.createPerson([`admin@${c.acme}`, `reader@${c.beta}`], 'mixed');
    const rb = await PersonBrowser.open(browser);
    const mb = await PersonBrowser.open(browser);
    try {
      await rb.signedIn(base, reader);
      expect((await rb.call(base, 'GET', `${API_PREFIX}/endpoint/${c.agents.acme}`)).status).to.equal(200);
      const write = await rb.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.acme, displayName: 'by-the-reader' });
      expectErrorBody(write, 403, `${API_PREFIX}/endpoint`);
      expect(write.body).to.include({ error: 'Forbidden' });

      await mb.signedIn(base, mixed);
      expect(await mb.agentIds(base)).to.deep.equal([c.agents.acme, c.agents.beta].sort());
      const tree = await mb.call(base, 'GET', `${API_PREFIX}/org/tree`);
      expect((tree.body as { organizations: { id: string }[] }).organizations.map((o) => o.id).sort()).to.deep.equal([c.acme, c.beta].sort());
      expect((await mb.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.acme, displayName: 'by-mixed' })).status).to.equal(200);
      expect((await mb.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.beta, displayName: 'by-mixed' })).status).to.equal(403);

      // The console offers write controls only where the person's grants allow writing.
      expect(await sendCommandOffered(rb.page, base, c.agents.acme), 'a reader is offered a command').to.equal(false);
      expect(await sendCommandOffered(mb.page, base, c.agents.acme), 'an admin is not offered a command').to.equal(true);
      expect(await sendCommandOffered(mb.page, base, c.agents.beta), 'a reader of beta is offered a command there').to.equal(false);
    } finally {
      await rb.close();
      await mb.close();
    }
  });

  it('refuses a person whose claim grants nothing, with a page saying why, and creates no session', async () => {
    const person = await kc.createPerson([], 'nogrant');
    const b = await PersonBrowser.open(browser);
    try {
      const landed = await b.signIn(base, person);
      expect(landed.status).to.equal(403);
      expect(landed.text).to.match(/grants you no role/).and.include(person.name);
      expect(await b.sessionCookie()).to.equal(undefined);
      expect((await b.call(base, 'GET', '/auth/session')).status).to.equal(401);
      // The refusal is stored before the answer; a search sees it once the audit index refreshes.
      const refusals = await waitFor(
        () =>
          app.admin.post<{ items: { kind: string; reason?: string }[] }>('/audit/search-page', {
            criteria: { actorEmail: person.email },
            pageRequest: { size: 10 },
          }),
        (r) => r.status === 200 && r.body.items.length > 0,
        30_000,
        200,
      );
      expect(refusals.value.body.items.map((e) => [e.kind, e.reason])).to.deep.equal([['REFUSAL', 'no-grant']]);
    } finally {
      await b.close();
    }
  });

  it('ends API access at sign-out, on this instance and on another one, and answers the provider’s end-session URL', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`admin@${c.acme}`], 'leaver');
    const second = await startTestApp({ ...ssoEnv(base), PORT: '0' });
    const b = await PersonBrowser.open(browser);
    try {
      const cookie = await b.signedIn(base, person);
      // The other instance has verified (and cached) the session before the sign-out.
      expect((await withCookie(second.url, cookie, 'GET', `${API_PREFIX}/org/tree`)).status).to.equal(200);
      // Another site cannot sign the person out; their own browser can without the CSRF token (docs/adr/0075).
      const forged = await withCookie(base, cookie, 'POST', '/auth/logout', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
      expectErrorBody(forged, 403, '/auth/logout');
      expect((await withCookie(base, cookie, 'GET', '/auth/session')).status).to.equal(200);
      const out = await b.call(base, 'POST', '/auth/logout', undefined, { csrf: false });
      expect(out.status, JSON.stringify(out.body)).to.equal(200);
      expect(out.body).to.include({ signedOut: true });
      const endSession = new URL((out.body as { endSessionUrl: string }).endSessionUrl);
      expect(`${endSession.origin}${endSession.pathname}`).to.equal(`${kc.issuer}/protocol/openid-connect/logout`);
      expect(endSession.searchParams.get('client_id')).to.equal(CLIENT_ID);
      expect(endSession.searchParams.get('id_token_hint')).to.be.a('string');
      expect((await withCookie(base, cookie, 'GET', `${API_PREFIX}/org/tree`)).status).to.equal(401);
      const elsewhere = await waitFor(() => withCookie(second.url, cookie, 'GET', `${API_PREFIX}/org/tree`), (a) => a.status === 401, 30_000, 100);
      expect(elsewhere.met, 'the other instance still honours the ended session').to.equal(true);
    } finally {
      await b.close();
      await second.close();
    }
  });

  it('ends a live session when Keycloak logs the person out (back-channel logout)', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`reader@${c.acme}`], 'loggedout');
    const bystander = await kc.createPerson([`reader@${c.acme}`], 'bystander');
    const b = await PersonBrowser.open(browser);
    const other = await PersonBrowser.open(browser);
    try {
      const cookie = await b.signedIn(base, person);
      const otherCookie = await other.signedIn(base, bystander);
      expect((await withCookie(base, cookie, 'GET', '/auth/session')).status).to.equal(200);
      await kc.logoutUser(person.username);
      const said = (): string => app.logs.filter((l) => /back-?channel/.test(l)).join('\n');
      expect(await sessionEnds(base, cookie, KEYCLOAK_MS), `the session outlived the back-channel logout; the service logged:\n${said()}`).to.equal(true);
      // Only that person's session ended.
      expect((await withCookie(base, otherCookie, 'GET', '/auth/session')).status).to.equal(200);
    } finally {
      await b.close();
      await other.close();
    }
  });

  it('follows Keycloak between sign-ins: a grant changed there applies, and a person disabled there loses the session', async () => {
    const mine = await startTestApp({ ...ssoEnv(recheckBase), ECS_SESSION_RECHECK_SECONDS: '1' });
    const c = await customers(mine);
    const leaver = await kc.createPerson([`admin@${c.acme}`], 'leaver');
    const mover = await kc.createPerson([`admin@${c.acme}`], 'mover');
    const b = await PersonBrowser.open(browser);
    const m = await PersonBrowser.open(browser);
    try {
      const cookie = await b.signedIn(recheckBase, leaver);
      const moverCookie = await m.signedIn(recheckBase, mover);
      const grantsOf = async (k: string): Promise<unknown> => (await withCookie(recheckBase, k, 'GET', '/auth/session')).body;

      // Keycloak's administrator makes the mover a reader of beta: the next recheck brings that grant.
      await kc.setRoles(mover.username, [`reader@${c.beta}`]);
      const moved = await waitFor(() => grantsOf(moverCookie), (s) => JSON.stringify((s as { grants?: unknown }).grants) === JSON.stringify([{ role: 'reader', orgId: c.beta }]), KEYCLOAK_MS, 200);
      expect(moved.met, `grants still ${JSON.stringify(moved.value)}`).to.equal(true);
      expect(await m.agentIds(recheckBase)).to.deep.equal([c.agents.beta]);
      const write = await m.call(recheckBase, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.acme, displayName: 'no-longer-theirs' });
      expectErrorBody(write, 403, `${API_PREFIX}/endpoint`);

      // Disabling sends no logout from Keycloak: only the refused refresh ends the session.
      expect((await withCookie(recheckBase, cookie, 'GET', '/auth/session')).status).to.equal(200);
      await kc.disablePerson(leaver.username);
      expect(await sessionEnds(recheckBase, cookie, KEYCLOAK_MS), 'the disabled person’s session lived on').to.equal(true);
      const ended = await waitFor(
        () => mine.admin.post<{ items: { kind: string; reason?: string }[] }>('/audit/search-page', { criteria: { actorEmail: leaver.email }, pageRequest: { size: 100 } }),
        (r) => r.status === 200 && r.body.items.some((e) => e.kind === 'SIGN_OUT' && e.reason === 'ended-at-idp'),
        KEYCLOAK_MS,
        200,
      );
      expect(ended.met, `no SIGN_OUT ended-at-idp for ${leaver.email}: ${JSON.stringify(ended.value.body)}`).to.equal(true);
      // The mover, still enabled, keeps their session.
      expect((await withCookie(recheckBase, moverCookie, 'GET', '/auth/session')).status).to.equal(200);
    } finally {
      await b.close();
      await m.close();
      await mine.close();
    }
  });

  it('refuses a forged cross-site POST with a section-7 403, and a same-origin write without the CSRF token', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`admin@${c.acme}`], 'target');
    const b = await PersonBrowser.open(browser);
    const attacker = await import('node:http').then(
      (http) =>
        new Promise<{ url: string; close(): void }>((resolve) => {
          const srv = http.createServer((_req, res) => {
            res.setHeader('content-type', 'text/html');
            res.end(
              `<form id="f" method="POST" action="${base}${API_PREFIX}/endpoint" enctype="text/plain"><input name='{"orgId":"${c.acme}","displayName":"forged","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
            );
          });
          srv.listen(0, '127.0.0.1', () => {
            const addr = srv.address() as { port: number };
            resolve({ url: `http://127.0.0.1:${addr.port}/`, close: () => srv.close() });
          });
        }),
    );
    try {
      await b.signedIn(base, person);
      const [forged] = await Promise.all([
        b.page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${base}${API_PREFIX}/endpoint`, { timeout: 60_000 }),
        b.page.goto(attacker.url),
      ]);
      expectErrorBody({ status: forged.status(), body: JSON.parse(await forged.text()) as unknown }, 403, `${API_PREFIX}/endpoint`);
      const noToken = await b.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: c.acme, displayName: 'no-csrf' }, { csrf: false });
      expectErrorBody(noToken, 403, `${API_PREFIX}/endpoint`);
      expect((noToken.body as { message: string }).message).to.match(/X-CSRF-Token/);
      const acme = await app.admin.post<{ items: { displayName?: string }[] }>('/endpoint/page-search', { criteria: { orgId: c.acme }, pageRequest: { size: 100 } });
      expect(acme.body.items.map((e) => e.displayName)).to.deep.equal([c.names.acme]);
    } finally {
      attacker.close();
      await b.close();
    }
  });

  it('signs in from the console, and after the session ends asks again with a message and returns to the page', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`reader@${c.acme}`], 'console');
    const b = await PersonBrowser.open(browser);
    const { page } = b;
    const signInFromConsole = async (): Promise<void> => {
      await page.click('#sso-sign-in');
      await submitLogin(page, person);
      await page.waitForSelector('[data-testid="signed-in-as"]', { timeout: KEYCLOAK_MS });
    };
    try {
      await page.goto(`${base}/console#/audit`);
      await signInFromConsole();
      expect(await page.innerText('[data-testid="signed-in-as"]')).to.equal(person.name);
      expect(page.url()).to.equal(`${base}/console#/audit`);
      expect(await page.isVisible('#token')).to.equal(false);

      // The session ends behind the page's back: Keycloak's administrator signs the person out
      // (which ends Keycloak's own session too, so the next sign-in asks for the password). The
      // next API call the console makes finds no session.
      const cookie = (await b.sessionCookie()) as string;
      await kc.logoutUser(person.username);
      expect(await sessionEnds(base, cookie, KEYCLOAK_MS), 'the session outlived the sign-out at Keycloak').to.equal(true);
      await page.evaluate("location.hash = '#/endpoints/agents'");
      await page.waitForSelector('[data-testid="sign-in-notice"]', { timeout: 60_000 });
      expect(await page.innerText('[data-testid="sign-in-notice"]')).to.match(/session has ended/);
      await signInFromConsole();
      expect(page.url()).to.equal(`${base}/console#/endpoints/agents`);
    } finally {
      await b.close();
    }
  });

  it('keeps a session across a restart of the service and honours it on a second instance', async () => {
    const c = await customers(app);
    const person = await kc.createPerson([`admin@${c.acme}`], 'restart');
    const b = await PersonBrowser.open(browser);
    let mine: TestApp | undefined = await startTestApp(ssoEnv(restartBase));
    let second: TestApp | undefined;
    try {
      const cookie = await b.signedIn(restartBase, person);
      await mine.close();
      mine = undefined;
      mine = await startTestApp(ssoEnv(restartBase));
      expect(await b.agentIds(restartBase)).to.deep.equal([c.agents.acme]);
      second = await startTestApp({ ...ssoEnv(restartBase), PORT: '0' });
      const there = await withCookie(second.url, cookie, 'GET', '/auth/session');
      expect(there.status).to.equal(200);
      expect(there.body).to.include({ email: person.email });
      expect((there.body as { grants: unknown }).grants).to.deep.equal([{ role: 'admin', orgId: c.acme }]);
    } finally {
      await second?.close();
      await mine?.close();
      await b.close();
    }
  });

  it('works with a realm made through the admin API: its own client, the roles claim in userinfo only', async () => {
    const ownBase = `http://127.0.0.1:${await freePort()}`;
    const client = { clientId: uid('console'), clientSecret: uid('secret') };
    const realm = await kc.createRealm({ realm: uid('realm'), ...client, aim: { publicUrl: ownBase }, claimName: 'ecs_roles', claimIn: 'userinfo' });
    const c = await customers(app);
    const own = await startTestApp({
      PORT: new URL(ownBase).port,
      ECS_OIDC_ISSUER: realm.issuer,
      ECS_OIDC_CLIENT_ID: client.clientId,
      ECS_OIDC_CLIENT_SECRET: client.clientSecret,
      ECS_PUBLIC_URL: ownBase,
      ECS_OIDC_ROLES_CLAIM: 'ecs_roles',
    });
    const person = await realm.createPerson([`admin@${c.acme}`, `reader@${c.beta}`], 'elsewhere');
    const b = await PersonBrowser.open(browser);
    try {
      const cookie = await b.signedIn(ownBase, person);
      const session = await b.call(ownBase, 'GET', '/auth/session');
      expect(session.body).to.include({ issuer: realm.issuer, email: person.email, name: person.name });
      expect((session.body as { grants: unknown }).grants).to.deep.equal([
        { role: 'admin', orgId: c.acme },
        { role: 'reader', orgId: c.beta },
      ]);
      expect(await b.agentIds(ownBase)).to.deep.equal([c.agents.acme, c.agents.beta].sort());
      await realm.logoutUser(person.username);
      expect(await sessionEnds(ownBase, cookie, KEYCLOAK_MS), 'the back-channel logout of the other realm did not end the session').to.equal(true);
    } finally {
      await b.close();
      await own.close();
      await realm.deleteRealm();
    }
  });
});
