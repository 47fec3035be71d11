/**
 * Cross-site protection for requests authenticated by the login-session cookie
 * (docs/adr/0072-cross-site-rule-for-session-cookies.md). A request carried by `x-auth-token`
 * never reaches these rules: a browser does not add that header on its own.
 */
import crypto from 'node:crypto';
import { csrfTokenFor } from '../access/tokens.js';

/** Methods that change nothing; every other one is judged. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CSRF_HEADER = 'x-csrf-token';

export { csrfTokenFor };

export interface CsrfInput {
  method: string;
  /** The Origin header ('' when absent). */
  origin: string;
  /** The Sec-Fetch-Site header ('' when absent). */
  secFetchSite: string;
  /** The X-CSRF-Token header ('' when absent). */
  csrfHeader: string;
}

function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/**
 * Why a cookie-authenticated request must be refused (403), or undefined when it may pass:
 * an unsafe method needs a same-origin Origin (the service's public origin) or Fetch Metadata
 * `Sec-Fetch-Site: same-origin`, and the session's CSRF token in X-CSRF-Token.
 */
export function csrfRefusal(req: CsrfInput, publicOrigin: string, csrfToken: string): string | undefined {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return undefined;
  if (!isSameOrigin(req, publicOrigin)) return 'a write with the session cookie must come from the console itself (same origin)';
  if (req.csrfHeader === '' || !safeEqual(req.csrfHeader, csrfToken)) {
    return 'a write with the session cookie needs the X-CSRF-Token header that GET /auth/session gives';
  }
  return undefined;
}

// Fetch Metadata is set by the browser alone; it also covers a console reached under another host name than ECS_PUBLIC_URL's.
function isSameOrigin(req: CsrfInput, publicOrigin: string): boolean {
  return req.origin === publicOrigin || req.secFetchSite === 'same-origin';
}

/**
 * Why a sign-out carried by the session cookie must be refused (403), or undefined: only a
 * request a browser marked as coming from elsewhere (another Origin, `null`, or Fetch Metadata
 * other than same-origin or none) is refused; no token is needed, so the person's own browser
 * or a client holding the cookie can always end the session
 * (docs/adr/0075-sign-out-needs-no-csrf-token.md).
 */
export function signOutRefusal(req: Omit<CsrfInput, 'csrfHeader'>, publicOrigin: string): string | undefined {
  if (isSameOrigin({ ...req, csrfHeader: '' }, publicOrigin)) return undefined;
  const crossSite = req.origin !== '' || (req.secFetchSite !== '' && req.secFetchSite !== 'none');
  return crossSite ? 'a sign-out with the session cookie must not come from another site' : undefined;
}
