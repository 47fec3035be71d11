/** Organizations: the caller's subtree for the scope picker. */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type OrganizationTree = Schema<'OrganizationTree'>;
export type OrganizationNode = OrganizationTree['organizations'][number];

/** The organizations of the caller's subtree (GET /org/tree). */
export function getOrganizationTree(): Promise<OrganizationTree> {
  return unwrap(client.GET(`${API}/org/tree`));
}
