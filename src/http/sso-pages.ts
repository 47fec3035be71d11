/** What single sign-on says to a browser: its cookies, the console path a login returns to, and small pages. */
import type Koa from 'koa';

export const SESSION_COOKIE = 'ecs_session';
export const LOGIN_COOKIE = 'ecs_login';

/** A Set-Cookie value (built here: Koa refuses `Secure` cookies on the plain-http hop behind a TLS proxy). */
export function cookie(name: string, value: string, opts: { maxAgeSeconds: number; secure: boolean; path?: string }): string {
  return [
    `${name}=${value}`,
    `Path=${opts.path ?? '/'}`,
    `Max-Age=${opts.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(opts.secure ? ['Secure'] : []),
  ].join('; ');
}

/** A `return` value the login may come back to: a path inside the console, never another origin. */
export function consoleReturnPath(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2048) return '/console';
  // Backslashes and whitespace (control characters included) could turn a path into another origin in some browsers.
  if (!/^\/console(?:[/?#]|$)/.test(value) || /[\\\s]/.test(value) || [...value].some((c) => c.charCodeAt(0) < 32)) return '/console';
  return value;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small page for the browser (the sign-in ended without a session). */
export function page(ctx: Koa.Context, status: number, title: string, lines: string[]): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(
    title,
  )}</h1>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}<p><a href="/console">Back to the console</a></p></main></body></html>`;
}

/** The session cookie's secret, if the request carries one. */
export function sessionSecretOf(ctx: Koa.Context): string | undefined {
  const v = ctx.cookies.get(SESSION_COOKIE);
  return v === undefined || v === '' ? undefined : v;
}
