/**
 * Exports of an endpoint table's current search: the `/export` sibling of its page
 * search, read through the typed client (the token goes in the x-auth-token header, never in a
 * URL), then handed to the browser as a Blob download.
 */
import { API, client, unwrap } from './client';
import type { Body } from './types';

export type ExportFormat = 'ndjson' | 'csv';
const ACCEPT: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' };

type AgentBody = Body<'searchEndpoints'>;
type UtmBody = Body<'searchUtmEndpoints'>;
type LteBody = Body<'searchLteEndpoints'>;

/** The export of one family's search body, as a Blob. */
export function exportBlob(
  search: { family: 'agents'; body: AgentBody } | { family: 'utm'; body: UtmBody } | { family: 'lte'; body: LteBody },
  format: ExportFormat,
): Promise<Blob> {
  const headers = { Accept: ACCEPT[format] };
  if (search.family === 'agents') return unwrap<Blob>(client.POST(`${API}/endpoint/page-search/export`, { body: search.body, headers, parseAs: 'blob' }));
  if (search.family === 'utm') return unwrap<Blob>(client.POST(`${API}/utm-endpoint/searchPage/export`, { body: search.body, headers, parseAs: 'blob' }));
  return unwrap<Blob>(client.POST(`${API}/lte-endpoint/search/export`, { body: search.body, headers, parseAs: 'blob' }));
}

/** Saves a Blob under a file name (an object URL on a temporary link, revoked afterwards). */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
