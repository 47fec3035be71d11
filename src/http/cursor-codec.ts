/**
 * Deep-paging cursors (docs/adr/0010-cursors-for-deep-pages.md): a position signed with an HMAC
 * and bound to the operation, the token and the request, so it cannot be forged, moved to
 * another search or used by another token.
 */
import crypto from 'node:crypto';
import Joi from 'joi';
import { BadRequestError } from '../errors.js';
import type { PageRequest } from '../domain.js';


export interface CursorState {
  v: 1;
  /** operationId, token id, request fingerprint: what the cursor is bound to. */
  op: string;
  tok: string;
  fp: string;
  pit?: string;
  after?: unknown;
  /** The page this cursor returns, and the first page's total. */
  page: number;
  total: number;
}

const cursorState = Joi.object<CursorState>({
  v: Joi.number().valid(1).required(),
  op: Joi.string().required(),
  tok: Joi.string().required(),
  fp: Joi.string().required(),
  pit: Joi.string(),
  after: Joi.any(),
  page: Joi.number().integer().min(0).required(),
  total: Joi.number().integer().min(0).required(),
});

const INVALID_CURSOR =
  'cursor is not valid for this search: pass the nextCursor of the previous page with the same request body and token, or start again with cursor=start';

/** JSON with sorted keys, so the same request always fingerprints the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request a cursor continues: path parameters, criteria, size and sort (not the page). */
export function fingerprint(params: unknown, body: { pageRequest: PageRequest }): string {
  const request = { params, body: { ...body, pageRequest: { ...body.pageRequest, page: undefined } } };
  return crypto.createHash('sha256').update(canonical(request)).digest('base64url').slice(0, 22);
}

export class CursorCodec {
  private readonly key: Buffer;
  constructor(signingKey: string) {
    // A key of its own, derived from the configured secret (a cursor MAC is never an installer signature).
    this.key = crypto.createHmac('sha256', signingKey).update('ecs-cursor-v1').digest();
  }

  private mac(payload: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(payload).digest();
  }

  encode(state: CursorState): string {
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The state of a cursor this service minted for this operation, token and request; 400 otherwise. */
  decode(cursor: string, bound: { op: string; tok: string; fp: string }): CursorState {
    const [payload, sig, ...rest] = cursor.split('.');
    if (!payload || !sig || rest.length > 0) throw new BadRequestError(INVALID_CURSOR);
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected))
      throw new BadRequestError(INVALID_CURSOR);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw new BadRequestError(INVALID_CURSOR);
    }
    const { value, error } = cursorState.validate(parsed);
    if (error || value.op !== bound.op || value.tok !== bound.tok || value.fp !== bound.fp) {
      throw new BadRequestError(INVALID_CURSOR);
    }
    return value;
  }
}
