/** Elasticsearch errors → AppErrors, in one place (the store boundary and the last-resort handler). */
import { errors } from '@elastic/elasticsearch';
import { AppError, NotFoundError, ServiceUnavailableError, WriteConflictError } from '../errors.js';

type EsErrorBody = { error?: { type?: string; reason?: string; root_cause?: { type?: string }[] } };

/** The `error.type` of an Elasticsearch error response (undefined for any other error). */
export function esErrorType(err: unknown): string | undefined {
  if (!(err instanceof errors.ResponseError)) return undefined;
  const body = err.meta?.body as EsErrorBody | undefined;
  return body?.error?.type;
}

/** True for errors that mean "the store is not reachable or not ready right now". */
export function isStoreUnavailable(err: unknown): boolean {
  if (
    err instanceof errors.ConnectionError ||
    err instanceof errors.TimeoutError ||
    err instanceof errors.NoLivingConnectionsError ||
    err instanceof errors.RequestAbortedError
  ) {
    return true;
  }
  if (err instanceof errors.ResponseError) {
    const status = err.meta?.statusCode ?? 0;
    const type = esErrorType(err);
    return (
      status === 503 ||
      status === 429 ||
      status === 502 ||
      status === 504 ||
      type === 'cluster_block_exception' ||
      // The service's own alias or index is missing: its indices are not (or no longer) set up.
      type === 'index_not_found_exception' ||
      type === 'no_shard_available_action_exception' ||
      type === 'unavailable_shards_exception' ||
      type === 'search_phase_execution_exception' && status >= 500
    );
  }
  return false;
}

/**
 * Translates an Elasticsearch client error. `notFound` names the record for a 404.
 * Errors that are not the store's are returned unchanged.
 */
export function translateStoreError(err: unknown, notFound?: string): unknown {
  if (err instanceof AppError) return err;
  if (isStoreUnavailable(err)) return new ServiceUnavailableError();
  if (err instanceof errors.ResponseError) {
    const status = err.meta?.statusCode ?? 0;
    const type = esErrorType(err);
    if (status === 409 || type === 'version_conflict_engine_exception') {
      return new WriteConflictError('the record was changed by someone else; re-read it and retry with its current version');
    }
    if (status === 404 && notFound) return new NotFoundError(notFound);
  }
  return err;
}

/** Runs a store call and translates its errors. */
export async function storeCall<T>(fn: () => Promise<T>, notFound?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateStoreError(err, notFound);
  }
}
