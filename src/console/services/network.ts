/** Network hosts discovered in an organization (one page). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type NetworkHostPage = Schema<'NetworkHostPage'>;

export function networkHosts(orgId: string, page = 0, size = 10): Promise<NetworkHostPage> {
  return unwrap(client.POST(`${API}/network-host/search-page`, { body: { criteria: { orgId }, pageRequest: { page, size } } }));
}
