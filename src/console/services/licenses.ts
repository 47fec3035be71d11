/** Licenses: counts by state, one license, state moves (the state machine may refuse: 409). */
import { API, client, unwrap } from './client';
import { singleOrg, type Scope } from './scope';
import type { Schema } from './types';

export type License = Schema<'LicenseInfo'>;
export type LicenseState = NonNullable<Schema<'LicenseCriteria'>['state']>;
export const LICENSE_STATES: LicenseState[] = ['CREATED', 'ACTIVATED', 'REVOKED', 'DEACTIVATED', 'EXPIRED'];

/** Licenses of the scope in a state (POST /license/count). */
export async function countLicenses(scope: Scope, state: LicenseState): Promise<number> {
  const orgId = singleOrg(scope);
  const r = await unwrap(client.POST(`${API}/license/count`, { body: { state, ...(orgId ? { orgId } : {}) } }));
  return r.count;
}

/** Licenses owned by an endpoint (POST /license/count, ownerId). */
export async function countOwnedLicenses(ownerId: string): Promise<number> {
  return (await unwrap(client.POST(`${API}/license/count`, { body: { ownerId } }))).count;
}

export function getLicense(id: string): Promise<License> {
  return unwrap(client.GET(`${API}/license/{id}`, { params: { path: { id } } }));
}

/** Moves a license to `state` (PATCH /license/{id}/state/{licenseState}); 409 when the state machine refuses. */
export function setLicenseState(id: string, state: LicenseState): Promise<License> {
  return unwrap(client.PATCH(`${API}/license/{id}/state/{licenseState}`, { params: { path: { id, licenseState: state } } }));
}
