/**
 * A multi-search whose answer is parsed search by search (docs/adr/0144-a-multi-search-answer-read-search-by-search.md).
 *
 * The store client reads an answer into one string and parses it whole. A string longer than
 * V8's largest ordinary object (128 KB) takes pages of its own, which the process maps fresh,
 * and decoding and parsing such an answer cost about twice as much a KB as a shorter one
 * (bench/large-strings.ts). A coalesced multi-search of many pages is such an answer: 50 pages
 * of 20 records are about 850 KB. Here the answer's bytes are cut at the boundaries between its
 * searches' answers and each is decoded and parsed alone, so no string is longer than one search's
 * answer. The cut is checked by the parse itself: a boundary found inside a search's answer leaves
 * a part whose braces do not balance, which does not parse, and then the whole answer is parsed
 * as the client would have.
 */
import { Readable } from 'node:stream';
import { errors, type Client, type estypes, type TransportResult } from '@elastic/elasticsearch';
import { readRetries } from './client.js';

/** Shorter answers are parsed whole: their string is an ordinary object already. */
export const SPLIT_ABOVE_BYTES = 128 * 1024;

const OPENING = Buffer.from('"responses":[');
/** Between two searches' answers: each answer of a search that ran starts with its `took`. */
const BETWEEN = Buffer.from('},{"took":');
/** Statuses the client retries a read on (its transport's rule for `maxRetries`). */
const RETRIED = new Set([502, 503, 504]);

type Parse = (text: string) => unknown;

/**
 * The answers of a multi-search body, each parsed from its own bytes, in order; undefined when
 * the body does not cut into `count` parts that each parse (an answer with a failed search, or
 * a boundary's bytes inside a record), so the caller parses it whole.
 */
export function splitAnswers(body: Buffer, count: number, parse: Parse): unknown[] | undefined {
  const open = body.indexOf(OPENING);
  const close = body.lastIndexOf(']');
  if (open < 0 || close < open) return undefined;
  const parts: unknown[] = [];
  let start = open + OPENING.length;
  try {
    for (let at = body.indexOf(BETWEEN, start); at >= 0 && at < close; at = body.indexOf(BETWEEN, start)) {
      parts.push(parse(body.toString('utf8', start, at + 1)));
      start = at + 2;
    }
    parts.push(parse(body.toString('utf8', start, close)));
  } catch {
    return undefined;
  }
  return parts.length === count ? parts : undefined;
}

/** The answer's bytes; a connection lost while they arrive fails as the client's read would (ConnectionError). */
async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  } catch (err) {
    throw new errors.ConnectionError((err as Error).message);
  }
  return Buffer.concat(chunks);
}

/**
 * `client.msearch(request)` of `count` searches with the read retries, answering what it answers
 * and failing as it fails (a ResponseError for a status of 400 or more), with a long answer parsed
 * search by search.
 */
export async function multiSearch<T>(client: Client, request: estypes.MsearchRequest, count: number): Promise<estypes.MsearchResponse<T>> {
  const parse: Parse = (text) => client.serializer.deserialize(text);
  for (let attempt = 0; ; attempt++) {
    // The client's types do not follow asStream: the body is the answer's byte stream.
    const res = (await client.msearch<T>(request, { ...readRetries, asStream: true, meta: true })) as unknown as TransportResult<unknown>;
    if (!(res.body instanceof Readable)) throw new Error('the store client answered a multi-search without its byte stream');
    const body = await bytesOf(res.body);
    if (RETRIED.has(res.statusCode) && attempt < readRetries.maxRetries) continue;
    // As the client: a JSON answer parsed, any other (a proxy's error page) kept as text.
    const json = /json/.test(String(res.headers['content-type'] ?? ''));
    const whole = (): unknown => (body.length === 0 ? undefined : json ? parse(body.toString('utf8')) : body.toString('utf8'));
    if (res.statusCode >= 400) throw new errors.ResponseError({ ...res, body: whole() });
    const parts = body.length > SPLIT_ABOVE_BYTES ? splitAnswers(body, count, parse) : undefined;
    if (!parts) return whole() as estypes.MsearchResponse<T>;
    const took = Number(/"took":(\d+)/.exec(body.toString('latin1', 0, body.indexOf(OPENING)))?.[1] ?? 0);
    return { took, responses: parts } as estypes.MsearchResponse<T>;
  }
}
