/** The audit trail (POST /audit/search-page, an extension): admin and system tokens only. */
import { API, client, unwrap } from './client';
import type { Body, Ok } from './types';

export type AuditPage = Ok<'searchAuditEvents'>;
export type AuditCriteria = NonNullable<Body<'searchAuditEvents'>['criteria']>;

export function searchAudit(criteria: AuditCriteria, page: number, size: number): Promise<AuditPage> {
  return unwrap(
    client.POST(`${API}/audit/search-page`, {
      body: { criteria, pageRequest: { page, size, sort: [{ field: 'timestamp', direction: 'DESC' }] } },
    }),
  );
}
