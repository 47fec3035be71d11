/**
 * The one error hierarchy. Each AppError knows its HTTP status and the exception name
 * that the spec's section-7 body carries; `errorBody` renders that body.
 */
import { STATUS_CODES } from 'node:http';

export class AppError extends Error {
  readonly status: number;
  readonly exception: string;
  /** Extra response headers (Retry-After, Allow). */
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, exception?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.exception = exception ?? new.target.name;
    this.headers = headers;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}
export class ValidationError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'a valid x-auth-token header is required') {
    super(401, message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'the token is not permitted to access this resource') {
    super(403, message);
  }
}
export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}
export class MethodNotAllowedError extends AppError {
  constructor(message: string, allow?: string[]) {
    super(405, message, undefined, allow ? { Allow: allow.join(', ') } : {});
  }
}
export class ConflictError extends AppError {
  constructor(message: string, exception?: string) {
    super(409, message, exception);
  }
}
/**
 * The store refused a conditional or create-only write: the document changed (or appeared)
 * since it was read. A 409 for a client that sent the version; inside a server-side
 * read-modify-write it only means "read again" (src/store/optimistic.ts).
 */
export class WriteConflictError extends ConflictError {
  constructor(message: string) {
    // The same failure for the client as any other conflict.
    super(message, 'ConflictError');
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super(413, message);
  }
}
export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, message = 'rate limit exceeded for this token') {
    super(429, message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}
export class ServiceUnavailableError extends AppError {
  constructor(message = 'the data store is temporarily unavailable; retry later', retryAfterSeconds = 5) {
    super(503, message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}
/**
 * The client closed its connection before its request's body was read: no answer reaches it.
 * Counted and logged as 499, the status proxies give a request their client gave up on, not as
 * a failure of the service (docs/adr/0150-a-request-its-client-gave-up-on.md).
 */
export class ClientClosedError extends AppError {
  constructor() {
    super(499, 'the client closed the connection before its request was read');
  }
}
export class InternalError extends AppError {
  constructor() {
    super(500, 'unexpected error; retry', 'InternalServerError');
  }
}

/** What ties an error answer to its logs and trace (extensions beside the section-7 fields). */
export interface ErrorCorrelation {
  /** The request id (also the `x-request-id` header). */
  requestId?: string;
  /** The trace the request belongs to, while tracing is on. */
  traceId?: string;
}

/** The spec section-7 error body, with the correlation extensions (docs/adr/0090-opentelemetry-traces.md). */
export interface ErrorBody extends ErrorCorrelation {
  message: string;
  status: number;
  error: string;
  timestamp: number;
  exception: string;
  path: string;
}

export function errorBody(err: AppError, path: string, correlation: ErrorCorrelation = {}): ErrorBody {
  return {
    message: err.message,
    status: err.status,
    error: STATUS_CODES[err.status] ?? 'Error',
    timestamp: Date.now(),
    exception: err.exception,
    path,
    ...(correlation.requestId !== undefined ? { requestId: correlation.requestId } : {}),
    ...(correlation.traceId !== undefined ? { traceId: correlation.traceId } : {}),
  };
}
