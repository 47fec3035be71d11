/** The formats an export streams: NDJSON (the default) and CSV, written a batch at a time. */
import type Joi from 'joi';

export const NDJSON = 'application/x-ndjson';
export const CSV = 'text/csv';


export interface Format {
  contentType: string;
  extension: string;
  header?: string;
  lines(items: unknown[]): string;
}

export const ndjson: Format = {
  contentType: NDJSON,
  extension: 'ndjson',
  lines: (items) => items.map((i) => `${JSON.stringify(i)}\n`).join(''),
};

/** A cell a spreadsheet would run as a formula (OWASP: = + - @, and tab or CR before them). */
const FORMULA = /^[=+\-@\t\r]/;
/** A cell RFC 4180 wants quoted. */
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV cell: text guarded against formulas, nested values as JSON, quoted when needed. */
function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text: string;
  if (typeof value === 'string') text = FORMULA.test(value) ? `'${value}` : value;
  else text = JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * RFC 4180 (CRLF records, quotes doubled, a field with a comma, quote or line break quoted) and
 * no spreadsheet formulas: a text cell starting with = + - @ (or tab, CR) gets a leading
 * apostrophe (OWASP's advice); numbers and booleans are written as they are; nested values
 * are JSON. Written here rather than with csv-stringify: measured on 1,000 endpoint records it
 * took 44 ms against 5 ms, and that time blocks the event loop once per batch (docs/adr/0011-exports.md).
 */
export function csvFormat(columns: string[]): Format {
  return {
    contentType: `${CSV}; charset=utf-8`,
    extension: 'csv',
    header: `${columns.map(csvCell).join(',')}\r\n`,
    lines: (items) =>
      items
        .map((item) => `${columns.map((c) => csvCell((item as Record<string, unknown>)[c])).join(',')}\r\n`)
        .join(''),
  };
}

/** Top-level field names of the items of a page schema (the CSV columns), in declaration order. */
export function itemColumns(pageSchema: Joi.Schema | undefined): string[] {
  const desc = pageSchema?.describe() as
    { keys?: { items?: { items?: { keys?: Record<string, unknown> }[] } } } | undefined;
  return Object.keys(desc?.keys?.items?.items?.[0]?.keys ?? {});
}
