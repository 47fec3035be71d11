/** Software inventory: the organization's summary, the hosts with a title, one endpoint's list. */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type SummaryPage = Schema<'EndpointInstalledSoftwareCountPage'>;
export type SoftwareRecord = Schema<'EndpointInstalledSoftware'>;
export type EndpointSoftwarePage = Schema<'EndpointInstalledSoftwarePage'>;
export type SummarySortField = 'name' | 'version' | 'count';

/** One page of the organization's titles with host counts (POST /org/{id}/software-inventory-summary/search-page). */
export function softwareSummary(orgId: string, namePrefix: string | undefined, page: number, size: number, sort: { field: SummarySortField; direction: 'ASC' | 'DESC' }): Promise<SummaryPage> {
  return unwrap(
    client.POST(`${API}/org/{id}/software-inventory-summary/search-page`, {
      params: { path: { id: orgId } },
      body: { criteria: namePrefix ? { namePrefix } : {}, pageRequest: { page, size, sort: [sort] } },
    }),
  );
}

/** The inventory records (one per host) of a title and version in the organization. */
export function hostsWithSoftware(orgId: string, name: string, version: string): Promise<SoftwareRecord[]> {
  return unwrap(
    client.GET(`${API}/org/{id}/software-inventory/{software-name}/{software-version}`, {
      params: { path: { id: orgId, 'software-name': name, 'software-version': version } },
    }),
  );
}

/** One page of an endpoint's inventory. */
export function endpointSoftware(endpointId: string, page: number, size = 10): Promise<EndpointSoftwarePage> {
  return unwrap(
    client.POST(`${API}/endpoint/{id}/software-inventory/search-page`, {
      params: { path: { id: endpointId } },
      body: { criteria: {}, pageRequest: { page, size, sort: [{ field: 'name', direction: 'ASC' }] } },
    }),
  );
}
