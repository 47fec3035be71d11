/**
 * Deep paging and export (extensions), in one place for every page search.
 *
 * A page-search route declares `deepSearch`: the same search as its handler's, prepared as a
 * `DeepSearch` (a point in time read with search_after, src/store/scan.ts). `withDeepPaging`
 * then gives the route, by that declaration alone:
 * - `?cursor=start` on the page search: the page is read on a point in time and the answer
 *   carries `nextCursor`; the same request with `?cursor=<nextCursor>` returns the next page,
 *   past the 10,000-result window, with the first page's sort and totalCount;
 * - a sibling `POST <path>/export` in the `heavy` lane, streaming every matching record as NDJSON
 *   (default) or CSV (`Accept: text/csv`), a batch at a time, with backpressure.
 *
 * Tenancy: a cursor is a position, never an authority. Every continuation and every export
 * batch runs the query the service builds from this request with this caller's token, so the
 * caller's organization filter is applied again each time; the cursor is also signed (HMAC)
 * and bound to the operation, the token and the request, so it cannot be forged, moved to
 * another search or index, or used by another token. docs/adr/0010-cursors-for-deep-pages.md says why both.
 *
 * The cursors are ./cursor-codec.ts, the NDJSON and CSV writers ./export-formats.ts; this file
 * derives the routes.
 */
import { Readable } from 'node:stream';
import Joi from 'joi';
import { AppError, BadRequestError } from '../errors.js';
import { ok, RequestInput, type HandlerInput, type Reply, type RouteSpec } from './routes.js';
import { RESULT_WINDOW, type PageRequest } from '../domain.js';
import { callerKey } from '../access/principal.js';
import { CursorCodec, fingerprint } from './cursor-codec.js';
import { CSV, csvFormat, itemColumns, NDJSON, ndjson } from './export-formats.js';

export interface DeepPagingOptions {
  /** Signs cursors; every instance behind one address must share it. */
  signingKey: string;
  /** How long a point in time stays open after each page. */
  keepAliveSeconds: number;
  /** Records per store round trip of an export. */
  exportBatch?: number;
}

/** The `cursor` value that opens a cursor on the request's page. */
export const CURSOR_START = 'start';
export const EXPORT_BATCH = 1000;
/** How often an export batch refused by a full lane is tried again (after its Retry-After). */
const EXPORT_LANE_ATTEMPTS = 30;

export class NotAcceptableError extends AppError {
  constructor(message: string) {
    super(406, message);
  }
}

// ---- the declarations ---------------------------------------------------------------------

type DeepRoute = RouteSpec & { deepSearch: NonNullable<RouteSpec['deepSearch']> };

const cursorParam = Joi.string()
  .max(16_384)
  .description(
    'Extension: `start` reads this page on a point in time and answers `nextCursor`; ' +
      "the same request with `cursor=<nextCursor>` returns the next page, past the 10,000-result window, with the first page's sort and totalCount",
  )
  .meta({ 'x-extension': true });

const nextCursor = Joi.string()
  .description(
    'Extension: present when the request asked for a cursor and more pages follow; pass it as `cursor` with the same request body',
  )
  .meta({ 'x-extension': true });

/**
 * The handler's input with `query` replaced. Every field is named, not spread: a spread would
 * read `log`, which makes the request's logger (src/http/observe.ts) for every page; the input
 * itself stays the logger's source.
 */
function withQuery<P, Q, B>(input: HandlerInput<P, Q, B>, query: Q): HandlerInput<P, Q, B> {
  const { params, body, access, path, createdId, accepts, runInLane, onClose } = input;
  return new RequestInput({ params, query, body, access, path, createdId, accepts, runInLane, onClose }, input);
}

class DeepPaging {
  private readonly codec: CursorCodec;
  constructor(private readonly opts: DeepPagingOptions) {
    this.codec = new CursorCodec(opts.signingKey);
  }

  /** The page search with `?cursor=` and `nextCursor`; without a cursor it is exactly the spec's operation. */
  pageRoute(spec: DeepRoute): RouteSpec {
    const ok200 = spec.responses[200];
    return {
      ...spec,
      query: (spec.query ?? Joi.object()).keys({ cursor: cursorParam }),
      responses: {
        ...spec.responses,
        200: { ...ok200, schema: (ok200.schema as Joi.ObjectSchema).keys({ nextCursor }) },
      },
      handler: async (input) => {
        const { cursor, ...query } = (input.query ?? {}) as { cursor?: string };
        if (cursor === undefined) return spec.handler(withQuery(input, query));
        return this.cursorPage(spec, withQuery(input, query), cursor);
      },
    };
  }

  private async cursorPage(
    spec: DeepRoute,
    input: HandlerInput<unknown, unknown, unknown>,
    cursor: string,
  ): Promise<Reply> {
    const body = input.body as { pageRequest: PageRequest };
    const pr = body.pageRequest;
    const bound = {
      op: spec.operationId,
      tok: callerKey(input.access.principal) ?? 'anonymous',
      fp: fingerprint(input.params, body),
    };
    // Decoded before the store is asked anything: a forged cursor costs no round trip.
    const state = cursor === CURSOR_START ? undefined : this.codec.decode(cursor, bound);
    const from = pr.page * pr.size;
    if (state === undefined && from + pr.size > RESULT_WINDOW) {
      throw new BadRequestError(
        `pageRequest reaches result ${from + pr.size}: a cursor starts within the first ${RESULT_WINDOW} results; start at page 0 and follow nextCursor`,
      );
    }
    // Built from this request with this caller's token: the organization filter is applied again.
    const search = await spec.deepSearch(input);
    const keepAliveSeconds = this.opts.keepAliveSeconds;
    const res = state
      ? await search.page({ pit: state.pit, after: state.after }, pr.size, { keepAliveSeconds })
      : await search.page(undefined, pr.size, { keepAliveSeconds, from, trackTotal: true });
    const page = state ? state.page : pr.page;
    const total = state ? state.total : (res.total ?? 0);
    const more = res.items.length === pr.size && (!search.frozen || (page + 1) * pr.size < total);
    if (!more) await search.close(res.next);
    const next = more
      ? this.codec.encode({ v: 1, ...bound, pit: res.next.pit, after: res.next.after, page: page + 1, total })
      : undefined;
    return ok({
      pageRequest: { ...pr, page },
      totalCount: total,
      totalPages: Math.ceil(total / pr.size),
      items: res.items,
      ...(next ? { nextCursor: next } : {}),
    });
  }

  /** `POST <path>/export`: every matching record, streamed. */
  exportRoute(spec: DeepRoute): RouteSpec {
    const columns = itemColumns(spec.responses[200]?.schema);
    return {
      ...spec,
      operationId: `${spec.operationId}Export`,
      path: `${spec.path}/export`,
      summary:
        `Extension: every record ${spec.operationId} matches (the body's criteria and sort; page and size are ignored), ` +
        'streamed as NDJSON (default) or CSV (Accept: text/csv; a header row, RFC 4180, cells starting with = + - @ prefixed with an apostrophe). ' +
        'A failure after the first byte ends the stream without its final chunk.',
      lane: 'heavy',
      extension: true,
      idempotent: false,
      query: undefined,
      deepSearch: undefined,
      responses: {
        200: {
          description: 'The matching records: one JSON object per line, or CSV with a header row',
          schema: Joi.string(),
          contentType: [NDJSON, CSV],
        },
      },
      errors: [...new Set([...spec.errors, 406])],
      handler: (input) => this.exportStream(spec, input, columns),
    };
  }

  private async exportStream(
    spec: DeepRoute,
    input: HandlerInput<unknown, unknown, unknown>,
    columns: string[],
  ): Promise<Reply> {
    const type = input.accepts ? input.accepts(NDJSON, CSV, 'application/json') : NDJSON;
    if (type === false) throw new NotAcceptableError(`an export answers ${NDJSON} or ${CSV}`);
    const format = type === CSV ? csvFormat(columns) : ndjson;
    const search = await spec.deepSearch(input);
    const batch = this.opts.exportBatch ?? EXPORT_BATCH;
    const keepAliveSeconds = this.opts.keepAliveSeconds;
    // The first batch is read inside the handler (and its lane): errors still get their status.
    const first = await search.page(undefined, batch, { keepAliveSeconds, from: 0 });
    const inLane = input.runInLane ?? (<T>(work: () => Promise<T>) => work());
    let current = first;
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await search.close(current.next);
    };
    async function* chunks(): AsyncGenerator<string> {
      try {
        if (format.header) yield format.header;
        for (;;) {
          if (current.items.length > 0) yield format.lines(current.items);
          if (current.items.length < batch) return;
          const pos = current.next;
          // Each later batch takes a heavy slot only for its own store round trip, never while
          // the client drains the stream.
          current = await nextBatch(() => inLane(() => search.page(pos, batch, { keepAliveSeconds })));
        }
      } finally {
        // Runs at the end, on a failure, and when the client goes away (Koa destroys the stream).
        await close();
      }
    }
    const body = Readable.from(chunks(), { objectMode: false });
    // A stream destroyed before its first read never runs the generator's `finally`.
    body.once('close', () => void close());
    return {
      status: 200,
      body,
      contentType: format.contentType,
      headers: { 'Content-Disposition': `attachment; filename="${spec.operationId}.${format.extension}"` },
    };
  }
}

/** An export batch the lane sheds waits its Retry-After and queues again: the export was admitted. */
async function nextBatch<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      const shed =
        err instanceof AppError &&
        (err.status === 429 || err.status === 503) &&
        err.headers['Retry-After'] !== undefined;
      if (!shed || attempt >= EXPORT_LANE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, Number(err.headers['Retry-After']) * 1000));
    }
  }
}

function isDeep(spec: RouteSpec): spec is DeepRoute {
  return spec.deepSearch !== undefined;
}

/**
 * The route table with deep paging: every route declaring `deepSearch` gets `?cursor=` and an
 * `/export` sibling (declared right after it, so the OpenAPI document and the tenant-isolation
 * tests see it like any other route).
 */
export function withDeepPaging(routes: RouteSpec[], opts: DeepPagingOptions): RouteSpec[] {
  const deep = new DeepPaging(opts);
  return routes.flatMap((spec) => (isDeep(spec) ? [deep.pageRoute(spec), deep.exportRoute(spec)] : [spec]));
}
