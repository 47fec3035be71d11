/**
 * Serves the operator console built into dist/console: `/console` answers the
 * index page (no-cache, so a new build is picked up at once), `/console/assets/<hashed name>`
 * the bundles (immutable for a year: a changed file gets a new name). Every answer carries a
 * Content-Security-Policy without 'unsafe-inline' and refuses framing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';

export const CONSOLE_PATH = '/console';

/** dist/console of the checkout, from both src/http (tsx) and dist/http (compiled). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = { '.js': 'application/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

export function consoleAssets(dir = CONSOLE_DIR): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== CONSOLE_PATH && !ctx.path.startsWith(`${CONSOLE_PATH}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const rest = ctx.path.slice(CONSOLE_PATH.length);
    let file: string;
    if (rest === '' || rest === '/') {
      file = path.join(dir, 'index.html');
      ctx.set('Cache-Control', 'no-cache');
      ctx.type = 'text/html; charset=utf-8';
    } else {
      const name = /^\/assets\/([\w-]+\.(?:js|css|map))$/.exec(rest)?.[1];
      if (!name) return next();
      file = path.join(dir, 'assets', name);
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = TYPES[path.extname(name)] ?? 'application/octet-stream';
    }
    if (!fs.existsSync(file)) {
      if (rest === '' || rest === '/') {
        ctx.status = 503;
        ctx.type = 'text/plain';
        ctx.body = 'the console is not built: run `npm run build`';
        return;
      }
      return next();
    }
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = fs.createReadStream(file);
  };
}

/** What `npm start` prints: the console's address and how to get a token to sign in with. */
export function consoleBanner(port: number): string {
  return [
    `console: http://localhost:${port}${CONSOLE_PATH}`,
    '  sign in with an admin or reader token of your organization; to mint one (README, "The first token"):',
    `  curl -X POST localhost:${port}/endpoint-control-service/v1/admin/tokens -H "x-auth-token: $ECS_ADMIN_TOKEN" \\`,
    `    -H 'content-type: application/json' -d '{"name":"soc-analyst","orgId":"<your org>","role":"admin"}'`,
  ].join('\n');
}
