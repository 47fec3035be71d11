/**
 * Single sign-on against a real Keycloak (src/dev/local-keycloak.ts, the repository's realm),
 * driven through Keycloak's own login page by a real Chromium: grants from the `ecs_roles`
 * claim decide what a person sees and may do; sign-out, back-channel logout and the cross-site
 * rule end or refuse access; a session outlives a restart and is honoured by another instance.
 */
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../../src/dev/local-elasticsearch.js';
import { CLIENT_ID, CLIENT_SECRET, KeycloakAdmin, testKeycloak } from '../helpers/keycloak.js';
import { waitFor } from '../helpers/wait.js';
import { API_PREFIX } from '../../src/http/routes.js';
import { buildConsole } from '../../scripts/build-console.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORDS: Record<string, string> = { alice: 'alice-password', rita: 'rita-password', max: 'max-password', nora: 'nora-password' };

interface Answer {
  status: number;
  body: unknown;
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
  async signIn(base: string, username: string): Promise<{ status: number; url: string; text: string }> {
    await this.page.goto(`${base}/auth/login?return=${encodeURIComponent('/console#/overview')}`);
    await this.page.waitForSelector('#username', { timeout: 60_000 });
    await this.page.fill('#username', username);
    await this.page.fill('#password', PASSWORDS[username]);
    const [response] = await Promise.all([
      this.page.waitForResponse((r) => r.url().startsWith(`${base}/auth/callback`), { timeout: 60_000 }),
      this.page.click('#kc-login'),
    ]);
    await this.page.waitForLoadState('domcontentloaded');
    return { status: response.status(), url: this.page.url(), text: await this.page.innerText('body').catch(() => '') };
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

  close(): Promise<void> {
    return this.context.close();
  }
}

/** A call from outside any browser, carrying a session cookie. */
async function withCookie(base: string, cookie: string, method: string, path: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method, headers: { cookie: `ecs_session=${cookie}` } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

function ids(answer: Answer): string[] {
  return ((answer.body as { items?: { id: string }[] }).items ?? []).map((i) => i.id).sort();
}

describe('Single sign-on with Keycloak', function () {
  // Each case signs in through Keycloak's pages and some restart the service: slow on a loaded machine.
  this.timeout(300_000);
  let kc: KeycloakAdmin;
  let port: number;
  let base: string;
  let app: TestApp;
  let browser: Browser;
  const endpoints: Record<string, string> = {};

  const ssoEnv = (): Record<string, string> => ({
    PORT: String(port),
    ECS_OIDC_ISSUER: kc.issuer,
    ECS_OIDC_CLIENT_ID: CLIENT_ID,
    ECS_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    ECS_PUBLIC_URL: base,
  });

  before(async function () {
    // A cold Keycloak on a loaded machine: minutes (its start is condition-bound, not a sleep).
    this.timeout(900_000);
    kc = new KeycloakAdmin(await testKeycloak());
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await kc.aimClient(base);
    app = await startTestApp(ssoEnv());
    const w = app.world;
    const msp = await w.org();
    await w.org(msp, 'acme');
    await w.org(msp, 'beta');
    const other = await w.org();
    for (const [name, org] of [
      ['acme', 'acme'],
      ['beta', 'beta'],
      ['other', other],
    ] as const) {
      endpoints[name] = (await w.endpoint(org)).id;
    }
    await buildConsole();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('signs an admin of one customer in through the login page and shows only that customer’s fleet', async () => {
    const alice = await PersonBrowser.open(browser);
    try {
      const landed = await alice.signIn(base, 'alice');
      expect(landed.status).to.equal(302);
      expect(landed.url).to.equal(`${base}/console#/overview`);
      const session = await alice.call(base, 'GET', '/auth/session');
      expect(session.status).to.equal(200);
      expect(session.body).to.include({ email: 'alice@acme.example', name: 'Alice Admin' });
      expect((session.body as { grants: unknown }).grants).to.deep.equal([{ role: 'admin', orgId: 'acme' }]);
      expect((session.body as { csrfToken: string }).csrfToken).to.be.a('string').with.length.above(20);
      const page = await alice.call(base, 'POST', `${API_PREFIX}/endpoint/page-search`, { criteria: {}, pageRequest: { size: 100 } });
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      expect(ids(page)).to.deep.equal([endpoints.acme]);
      const created = await alice.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'acme', displayName: 'made-by-alice' });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      expect((created.body as { createdBy: { username: string } }).createdBy.username).to.equal('alice@acme.example');
      const elsewhere = await alice.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'beta', displayName: 'not-hers' });
      expect(elsewhere.status).to.equal(403);
      const cookie = (await alice.context.cookies()).find((c) => c.name === 'ecs_session');
      expect(cookie?.httpOnly).to.equal(true);
      expect(cookie?.sameSite).to.equal('Lax');
    } finally {
      await alice.close();
    }
  });

  it('lets a reader read but not act, and a person with two grants act only where they are admin', async () => {
    const rita = await PersonBrowser.open(browser);
    const max = await PersonBrowser.open(browser);
    try {
      expect((await rita.signIn(base, 'rita')).status).to.equal(302);
      const read = await rita.call(base, 'GET', `${API_PREFIX}/endpoint/${endpoints.acme}`);
      expect(read.status).to.equal(200);
      const write = await rita.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'acme', displayName: 'by-rita' });
      expect(write.status).to.equal(403);
      expect(write.body).to.include({ status: 403, error: 'Forbidden' });

      expect((await max.signIn(base, 'max')).status).to.equal(302);
      const seen = await max.call(base, 'POST', `${API_PREFIX}/endpoint/page-search`, { criteria: {}, pageRequest: { size: 100 } });
      expect(ids(seen)).to.include.members([endpoints.acme, endpoints.beta]).and.not.include(endpoints.other);
      const tree = await max.call(base, 'GET', `${API_PREFIX}/org/tree`);
      expect((tree.body as { organizations: { id: string }[] }).organizations.map((o) => o.id).sort()).to.deep.equal(['acme', 'beta']);
      expect((await max.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'acme', displayName: 'by-max' })).status).to.equal(200);
      expect((await max.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'beta', displayName: 'by-max' })).status).to.equal(403);
    } finally {
      await rita.close();
      await max.close();
    }
  });

  it('refuses a person whose claim grants nothing, with a page saying why, and creates no session', async () => {
    const nora = await PersonBrowser.open(browser);
    try {
      const landed = await nora.signIn(base, 'nora');
      expect(landed.status).to.equal(403);
      expect(landed.text).to.match(/grants you no role/);
      expect(await nora.sessionCookie()).to.equal(undefined);
      expect((await nora.call(base, 'GET', '/auth/session')).status).to.equal(401);
      // The refusal is stored before the answer; a search sees it once the audit index refreshes.
      const refusals = await waitFor(
        () =>
          app.admin.post<{ items: { kind: string; reason?: string }[] }>('/audit/search-page', {
            criteria: { actorEmail: 'nora@acme.example' },
            pageRequest: { size: 10 },
          }),
        (r) => r.status === 200 && r.body.items.some((e) => e.kind === 'REFUSAL' && e.reason === 'no-grant'),
        10_000,
      );
      expect(refusals.value.body.items.map((e) => [e.kind, e.reason])).to.deep.include(['REFUSAL', 'no-grant']);
    } finally {
      await nora.close();
    }
  });

  it('ends API access at sign-out, on this instance and on another one', async () => {
    const second = await startTestApp({ ...ssoEnv(), PORT: '0' });
    const alice = await PersonBrowser.open(browser);
    try {
      await alice.signIn(base, 'alice');
      const cookie = (await alice.sessionCookie()) as string;
      // The other instance has verified (and cached) the session before the sign-out.
      expect((await withCookie(second.url, cookie, 'GET', '/auth/session')).status).to.equal(200);
      const out = await alice.call(base, 'POST', '/auth/logout');
      expect(out.status, JSON.stringify(out.body)).to.equal(200);
      expect((out.body as { endSessionUrl: string }).endSessionUrl).to.match(new RegExp(`^${kc.issuer}/protocol/openid-connect/logout\\?`));
      expect((await withCookie(base, cookie, 'GET', `${API_PREFIX}/org/tree`)).status).to.equal(401);
      const elsewhere = await waitFor(
        () => withCookie(second.url, cookie, 'GET', `${API_PREFIX}/org/tree`),
        (a) => a.status === 401,
        10_000,
        50,
      );
      expect(elsewhere.met, 'the other instance still honours the ended session').to.equal(true);
    } finally {
      await alice.close();
      await second.close();
    }
  });

  it('ends a live session when Keycloak logs the person out (back-channel logout)', async () => {
    const alice = await PersonBrowser.open(browser);
    try {
      await alice.signIn(base, 'alice');
      const cookie = (await alice.sessionCookie()) as string;
      expect((await withCookie(base, cookie, 'GET', '/auth/session')).status).to.equal(200);
      await kc.logoutUser('alice');
      // Keycloak sends a logout token for each of the person's sessions (earlier cases' too), one after the other.
      const ended = await waitFor(() => withCookie(base, cookie, 'GET', '/auth/session'), (a) => a.status === 401, 60_000, 50);
      const said = app.logs.filter((l) => /back-?channel/.test(l)).join('\n');
      expect(ended.met, `the session outlived the back-channel logout; the service logged:\n${said}`).to.equal(true);
    } finally {
      await alice.close();
    }
  });

  it('refuses a forged cross-site POST and a same-origin write without the CSRF token', async () => {
    const alice = await PersonBrowser.open(browser);
    const attacker = await import('node:http').then(
      (http) =>
        new Promise<{ url: string; close(): void }>((resolve) => {
          const srv = http.createServer((_req, res) => {
            res.setHeader('content-type', 'text/html');
            res.end(
              `<form id="f" method="POST" action="${base}${API_PREFIX}/endpoint" enctype="text/plain"><input name='{"orgId":"acme","displayName":"forged","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
            );
          });
          srv.listen(0, '127.0.0.1', () => {
            const addr = srv.address() as { port: number };
            resolve({ url: `http://127.0.0.1:${addr.port}/`, close: () => srv.close() });
          });
        }),
    );
    try {
      await alice.signIn(base, 'alice');
      const [forged] = await Promise.all([
        alice.page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${base}${API_PREFIX}/endpoint`, { timeout: 30_000 }),
        alice.page.goto(attacker.url),
      ]);
      expect(forged.status()).to.equal(403);
      const noToken = await alice.call(base, 'POST', `${API_PREFIX}/endpoint`, { orgId: 'acme', displayName: 'no-csrf' }, { csrf: false });
      expect(noToken.status).to.equal(403);
      expect((noToken.body as { message: string }).message).to.match(/X-CSRF-Token/);
      const acme = await app.admin.post<{ items: { displayName?: string }[] }>('/endpoint/page-search', { criteria: { orgId: 'acme' }, pageRequest: { size: 100 } });
      expect(acme.body.items.map((e) => e.displayName)).to.not.include('forged').and.not.include('no-csrf');
    } finally {
      attacker.close();
      await alice.close();
    }
  });

  it('signs in from the console, and after the session ends asks again with a message and returns to the page', async () => {
    const rita = await PersonBrowser.open(browser);
    const { page } = rita;
    try {
      await page.goto(`${base}/console#/audit`);
      await page.click('#sso-sign-in');
      await page.waitForSelector('#username', { timeout: 60_000 });
      await page.fill('#username', 'rita');
      await page.fill('#password', PASSWORDS.rita);
      await page.click('#kc-login');
      await page.waitForSelector('[data-testid="signed-in-as"]', { timeout: 60_000 });
      expect(await page.innerText('[data-testid="signed-in-as"]')).to.equal('Rita Reader');
      expect(page.url()).to.equal(`${base}/console#/audit`);
      expect(await page.isVisible('#token')).to.equal(false);

      // The session ends behind the page's back (its own back-channel case is above): the next
      // API call the console makes finds no session.
      const cookie = (await rita.sessionCookie()) as string;
      expect((await rita.call(base, 'POST', '/auth/logout')).status).to.equal(200);
      const ended = await waitFor(() => withCookie(base, cookie, 'GET', '/auth/session'), (a) => a.status === 401, 10_000, 50);
      expect(ended.met, 'the session outlived its sign-out').to.equal(true);
      await page.evaluate("location.hash = '#/endpoints/agents'");
      await page.waitForSelector('[data-testid="sign-in-notice"]', { timeout: 30_000 });
      expect(await page.innerText('[data-testid="sign-in-notice"]')).to.match(/session has ended/);
      await page.click('#sso-sign-in');
      await page.waitForSelector('#username', { timeout: 60_000 });
      await page.fill('#username', 'rita');
      await page.fill('#password', PASSWORDS.rita);
      await page.click('#kc-login');
      await page.waitForSelector('[data-testid="signed-in-as"]', { timeout: 60_000 });
      expect(page.url()).to.equal(`${base}/console#/endpoints/agents`);
    } finally {
      await rita.close();
    }
  });

  it('keeps a session across a restart of the service and honours it on a second instance', async () => {
    const alice = await PersonBrowser.open(browser);
    let second: TestApp | undefined;
    try {
      await alice.signIn(base, 'alice');
      const cookie = (await alice.sessionCookie()) as string;
      await app.close();
      app = await startTestApp(ssoEnv());
      const afterRestart = await alice.call(base, 'POST', `${API_PREFIX}/endpoint/page-search`, { criteria: {}, pageRequest: { size: 100 } });
      expect(afterRestart.status).to.equal(200);
      expect(ids(afterRestart)).to.include(endpoints.acme).and.not.include(endpoints.beta);
      second = await startTestApp({ ...ssoEnv(), PORT: '0' });
      const there = await withCookie(second.url, cookie, 'GET', '/auth/session');
      expect(there.status).to.equal(200);
      expect(there.body).to.include({ email: 'alice@acme.example' });
    } finally {
      await second?.close();
      await alice.close();
    }
  });
});
