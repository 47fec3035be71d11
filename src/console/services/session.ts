/**
 * How the console is signed in. A person signed in through single sign-on holds a login
 * session in an HttpOnly cookie the page never sees; the page keeps only the session's CSRF
 * token in memory (sent on every write). A service account's access token lives in
 * sessionStorage only: never in a URL, a log or localStorage.
 */
const KEY = 'ecs.console.token';

export function getToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}

/** The sign-in methods the service offers (GET /auth/methods). */
export interface SignInMethods {
  sso: boolean;
  token: boolean;
}

/** A person's login session (GET /auth/session). */
export interface PersonSession {
  subject: string;
  email?: string;
  name: string;
  grants: { role: string; orgId?: string }[];
  expiresAt: string;
  csrfToken: string;
}

let csrfToken: string | undefined;

/** The CSRF token of the current login session, for writes. */
export function getCsrfToken(): string | undefined {
  return csrfToken;
}

export async function getSignInMethods(): Promise<SignInMethods> {
  const res = await fetch('/auth/methods');
  if (!res.ok) return { sso: false, token: true };
  return (await res.json()) as SignInMethods;
}

/** The login session the browser's cookie names, or undefined when there is none. */
export async function getPersonSession(): Promise<PersonSession | undefined> {
  const res = await fetch('/auth/session');
  if (!res.ok) {
    csrfToken = undefined;
    return undefined;
  }
  const s = (await res.json()) as PersonSession;
  csrfToken = s.csrfToken;
  return s;
}

/** Where single sign-on starts, coming back to the page the person is on. */
export function ssoLoginUrl(): string {
  return `/auth/login?return=${encodeURIComponent(`${location.pathname}${location.hash}`)}`;
}

/** Ends the login session everywhere; answers where the identity provider ends its own. */
export async function endPersonSession(): Promise<string | undefined> {
  const res = await fetch('/auth/logout', { method: 'POST', headers: csrfToken ? { 'x-csrf-token': csrfToken } : {} });
  csrfToken = undefined;
  if (!res.ok) return undefined;
  return ((await res.json()) as { endSessionUrl?: string }).endSessionUrl;
}
