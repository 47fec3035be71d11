/**
 * The typed API client: openapi-fetch over the types generated from the service's own OpenAPI
 * document (scripts/console-api.ts). Every call carries the access token or, signed in through
 * single sign-on, the login session's cookie and CSRF token; every failure
 * becomes an ApiError with the spec's status and message.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../../generated/console-api';
import { getCsrfToken, getToken } from './session';

export const API = '/endpoint-control-service/v1' as const;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Listeners told about every 401 (the session is over) so the shell can ask to sign in again. */
const unauthorizedListeners = new Set<(e: ApiError) => void>();
export function onUnauthorized(fn: (e: ApiError) => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = getToken();
    if (token) request.headers.set('x-auth-token', token);
    else {
      // Signed in through single sign-on: the cookie goes along by itself; writes carry the CSRF token.
      const csrf = getCsrfToken();
      if (csrf && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrf);
    }
    return request;
  },
};

export const client = createClient<paths>({ baseUrl: '' });
client.use(auth);

function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  if (typeof body === 'string' && body) return body;
  return `HTTP ${status}`;
}

/** The answer's data, or an ApiError for a non-2xx answer. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const e = new ApiError(response.status, messageOf(error, response.status));
    if (response.status === 401) for (const fn of unauthorizedListeners) fn(e);
    throw e;
  }
  return data as T;
}

/** A user-facing sentence for an error (401/403/409 explained). */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return `Not signed in, or the session or token is no longer valid (401): ${err.message}`;
    if (err.status === 403) return `Not allowed (403): ${err.message}`;
    if (err.status === 409) return `Refused (409): ${err.message}`;
    return `Error ${err.status}: ${err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A 409 on a write that carried a version: someone else changed the record. */
export function isStale(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
