/** Organizations: the caller's subtree for the scope picker. */
import { API, client, unwrap } from './client';
import type { Ok } from './types';

export type OrganizationTree = Ok<'getOrganizationTree'>;
export type OrganizationNode = OrganizationTree['organizations'][number];

/** The organizations of the caller's subtree (GET /org/tree). */
export function getOrganizationTree(): Promise<OrganizationTree> {
  return unwrap(client.GET(`${API}/org/tree`));
}
