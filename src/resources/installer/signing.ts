/**
 * Signed installer URLs: `<base>/<platform>/<version>/<file>?expires=<epoch seconds>&signature=<sig>`
 * where sig is base64url(HMAC-SHA256(key, "<url path>\n<expires>")). A download server that
 * holds the key verifies a URL with `verifyInstallerUrl` alone, without calling back.
 */
import crypto from 'node:crypto';

export type VerifyFailure = 'malformed' | 'expired' | 'bad-signature';

export type VerifyResult =
  | { valid: true; path: string; expiresAt: Date }
  | { valid: false; reason: VerifyFailure };

function signature(key: string, path: string, expires: number): string {
  return crypto.createHmac('sha256', key).update(`${path}\n${expires}`, 'utf8').digest('base64url');
}

/** Signs the URL of one file below `baseUrl`, valid until `nowMs + ttlSeconds`. */
export function signInstallerUrl(
  baseUrl: string,
  segments: readonly string[],
  key: string,
  ttlSeconds: number,
  nowMs: number = Date.now(),
): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + '/' + segments.map(encodeURIComponent).join('/'));
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  url.search = '';
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('signature', signature(key, url.pathname, expires));
  return url.toString();
}

/**
 * Verifies a signed installer URL: the signature must be the HMAC of its path and expiry
 * under `key` (compared in constant time) and the expiry must not have passed at `nowMs`.
 */
export function verifyInstallerUrl(url: string, key: string, nowMs: number = Date.now()): VerifyResult {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { valid: false, reason: 'malformed' };
  }
  const expiresRaw = parsed.searchParams.get('expires');
  const given = parsed.searchParams.get('signature');
  if (!expiresRaw || !/^\d{1,12}$/.test(expiresRaw) || !given) return { valid: false, reason: 'malformed' };
  const expires = Number(expiresRaw);
  const expected = Buffer.from(signature(key, parsed.pathname, expires));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !crypto.timingSafeEqual(actual, expected)) {
    return { valid: false, reason: 'bad-signature' };
  }
  if (expires * 1000 <= nowMs) return { valid: false, reason: 'expired' };
  return { valid: true, path: parsed.pathname, expiresAt: new Date(expires * 1000) };
}
