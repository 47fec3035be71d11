/** The access token lives in sessionStorage only: never in a URL, a log or localStorage. */
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
