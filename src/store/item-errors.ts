/**
 * The failure of one item of a bulk, multi-get or multi-search response, turned into the
 * error its own single request would have raised, then translated like any store error
 * (404 → NotFound when `notFound` names the record, 409 → Conflict, 429/503 and shard or
 * cluster blocks → ServiceUnavailable; anything else stays an Elasticsearch error, a 500).
 */
import { errors } from '@elastic/elasticsearch';
import { translateStoreError } from './errors.js';

export interface ItemErrorBody {
  type?: string;
  reason?: string | null;
  [key: string]: unknown;
}

export function itemError(status: number, error: ItemErrorBody | undefined, notFound?: string): unknown {
  const err = new errors.ResponseError({
    body: { error: error ?? { type: 'unknown', reason: `status ${status}` }, status },
    statusCode: status,
    headers: {},
    warnings: null,
    meta: {
      context: null,
      name: 'elasticsearch-js',
      request: { params: { method: 'POST', path: '' }, options: {}, id: 0 },
      connection: null,
      attempts: 0,
      aborted: false,
    },
  });
  return translateStoreError(err, notFound);
}
