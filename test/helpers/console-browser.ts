/**
 * A real Chromium for the console's browser tests: Debian's /usr/bin/chromium (or
 * CHROMIUM_PATH) driven by playwright-core, no browser download. One browser, context and page
 * per describe block, recording what the page reported, so a test can assert that no dialog
 * opened, no script failed and the CSP refused nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the tests' screenshots land (docs/console.md shows a few of them). */
export const SHOTS = path.resolve('.local/console-screenshots');

export interface ConsoleBrowser {
  page: Page;
  /** Messages of the dialogs the page opened (each dismissed at once). */
  dialogs: string[];
  /** Console messages of Content-Security-Policy refusals. */
  cspViolations: string[];
  /** Uncaught errors of the page's scripts. */
  pageErrors: string[];
  /** Every URL the page requested. */
  requestUrls: string[];
  /** A full-page screenshot into SHOTS. */
  shot(name: string): Promise<void>;
  /** Opens the console of the service at `baseUrl` and submits the sign-in form with `token`. */
  signIn(baseUrl: string, token: string): Promise<void>;
  /** axe-core's serious and critical violations on each view (`#/…`) of the console at `baseUrl`, one line each. */
  seriousA11yViolations(baseUrl: string, views: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}

/** Builds the console bundle (as `npm run build` does), launches Chromium and opens one page. */
export async function openConsoleBrowser(opts: { acceptDownloads?: boolean } = {}): Promise<ConsoleBrowser> {
  await buildConsole();
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: opts.acceptDownloads ?? false });
  const page = await context.newPage();
  const b: ConsoleBrowser = {
    page,
    dialogs: [],
    cspViolations: [],
    pageErrors: [],
    requestUrls: [],
    async shot(name) {
      fs.mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    },
    async signIn(baseUrl, token) {
      await page.goto(`${baseUrl}/console`);
      await page.fill('#token', token);
      await page.click('button[type="submit"]');
    },
    async seriousA11yViolations(baseUrl, views) {
      const found: string[] = [];
      for (const view of views) {
        await page.goto(`${baseUrl}/console${view}`);
        await page.waitForSelector('section[aria-labelledby]');
        // A view that polls (a running job's progress) never goes network-idle: its section is there.
        await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined);
        await page.evaluate(axe.source);
        const result = await page.evaluate<axe.AxeResults>("axe.run(document, { resultTypes: ['violations'] })");
        const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        found.push(...bad.map((v) => `${view} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`));
      }
      return found;
    },
    close: () => browser.close(),
  };
  page.on('dialog', (d) => {
    b.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => b.pageErrors.push(e.message));
  page.on('request', (r) => b.requestUrls.push(r.url()));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) b.cspViolations.push(m.text());
  });
  return b;
}
