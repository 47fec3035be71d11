/** A small HTTP client for tests: JSON in, JSON (or text) out, tokens in x-auth-token. */
export const P = '/endpoint-control-service/v1';

/**
 * Response checkers by base URL (see conformance.ts): every response is checked, and a
 * response that does not conform fails the request that received it.
 */
export const responseCheckers = new Map<
  string,
  (method: string, path: string, status: number, contentType: string, body: unknown) => string[]
>();

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
    const problems = responseCheckers.get(this.base)?.(method, url.split('?')[0], res.status, res.headers.get('content-type') ?? '', parsed) ?? [];
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
