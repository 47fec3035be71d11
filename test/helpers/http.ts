/** A small HTTP client for tests: JSON in, JSON (or text) out, tokens in x-auth-token. */
import type { SentRequest } from './conformance.js';

export const P = '/endpoint-control-service/v1';

/**
 * Response checkers by base URL (see conformance.ts): every response is checked, and a
 * response that does not conform fails the request that received it.
 */
export const responseCheckers = new Map<
  string,
  (method: string, path: string, status: number, contentType: string, body: unknown) => string[]
>();

/**
 * Request checkers by base URL (see conformance.ts): what the served document refuses in a
 * request (path, query, body); empty when it conforms.
 */
export const requestCheckers = new Map<string, (req: SentRequest) => string[]>();

/**
 * A disagreement between the document and the service over one request: the document
 * refuses it and the service did not (a 2xx or 3xx), or the document accepts it and the
 * service refused a field as unknown.
 */
function requestMismatch(refused: string[], status: number, body: unknown): string[] {
  if (refused.length > 0) return status < 400 ? [`the document refuses the request but the service answered ${status}:`, ...refused] : [];
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  if (status === 400 && typeof message === 'string' && / is not allowed/.test(message)) {
    return [`the document accepts the request but the service refused a field as unknown: ${message}`];
  }
  return [];
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * False for a call that deliberately sends what the document refuses and still expects the
   * service to take it (a tolerance the document cannot state); every other request is
   * checked against the document (requestCheckers).
   */
  checkRequest?: boolean;
}

export class Api {
  constructor(
    readonly base: string,
    readonly token?: string,
  ) {}

  /** The same client with another token (undefined: none). */
  as(token: string | undefined): Api {
    return new Api(this.base, token);
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = 'token' in opts ? opts.token : this.token;
    if (token) headers['x-auth-token'] = token;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const url = path.startsWith('/health') || path.startsWith('/metrics') || path.startsWith(P) ? path : P + path;
    const res = await fetch(this.base + url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    const type = res.headers.get('content-type') ?? '';
    // NDJSON (exports) stays text: one JSON document per line.
    if (type.includes('json') && !type.includes('ndjson') && text !== '') parsed = JSON.parse(text);
    const [pathOnly, search = ''] = url.split('?', 2);
    const problems = responseCheckers.get(this.base)?.(method, pathOnly, res.status, res.headers.get('content-type') ?? '', parsed) ?? [];
    const checkRequest = requestCheckers.get(this.base);
    if (checkRequest && opts.checkRequest !== false) {
      let sent: unknown = opts.body;
      if (opts.raw !== undefined) {
        try {
          sent = JSON.parse(opts.raw.toString()) as unknown;
        } catch {
          sent = opts.raw.toString();
        }
      }
      const refused = checkRequest({ method, path: pathOnly, query: new URLSearchParams(search), contentType: headers['content-type'], body: sent });
      const mismatch = requestMismatch(refused, res.status, parsed);
      if (mismatch.length > 0) {
        throw new Error(`request and service disagree with the OpenAPI document (test/helpers/conformance.ts):\n${mismatch.join('\n')}`);
      }
    }
    if (problems.length > 0) {
      throw new Error(
        `response does not conform to the OpenAPI document generated from the route declarations (test/helpers/conformance.ts):\n${problems.join('\n')}`,
      );
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = unknown>(path: string, opts?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, opts);
  }
  post<T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, { ...opts, body });
  }
  put<T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('PUT', path, { ...opts, body });
  }
  patch<T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('PATCH', path, { ...opts, body });
  }
  delete<T = unknown>(path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('DELETE', path, opts);
  }
}
