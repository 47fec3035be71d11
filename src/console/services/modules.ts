/** Enabled modules of an endpoint and bundle subscriptions of an organization. */
import { API, ApiError, client, unwrap } from './client';
import type { Ok, Schema } from './types';

export type EnabledModules = Schema<'EnabledModules'>;
export type ModuleName = NonNullable<Schema<'BundleSubscription'>['modules']>[number];
export type ModuleState = 'PENDING' | 'ACTIVE' | 'INACTIVE';
export const MODULES: ModuleName[] = ['fim', 'wel', 'antivirus', 'cmd', 'dnsFilter', 'fusionScanner', 'iocDetection', 'pan', 'policy', 'network', 'softwareInventory', 'vuln', 'fde', 'mdr'];
export type Bundle = Schema<'Bundle'>;

/** The endpoint's enabled modules, or undefined when never written (404). */
export async function getEndpointModules(id: string): Promise<EnabledModules | undefined> {
  try {
    return await unwrap(client.GET(`${API}/endpoint/{id}/enabled-modules`, { params: { path: { id } } }));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * Sets one module's state: creates the record when there is none, else replaces it carrying the
 * version read (a stale version answers 409, never overwrites).
 */
export function setEndpointModule(id: string, orgId: string, current: EnabledModules | undefined, module: ModuleName, state: ModuleState): Promise<EnabledModules> {
  if (!current) {
    return unwrap(client.POST(`${API}/endpoint/{id}/enabled-modules`, { params: { path: { id } }, body: { id, orgId, [module]: state } }));
  }
  const { createdBy: _c, updatedBy: _u, createdAt: _ca, updatedAt: _ua, ...rest } = current;
  return unwrap(client.PUT(`${API}/endpoint/{id}/enabled-modules`, { params: { path: { id } }, body: { ...rest, [module]: state } }));
}

export function listBundles(): Promise<Bundle[]> {
  return unwrap(client.GET(`${API}/bundle`));
}

export function listOrgBundles(orgId: string): Promise<Ok<'listOrgBundles'>> {
  return unwrap(client.GET(`${API}/org/{orgId}/bundle`, { params: { path: { orgId } } }));
}

export function subscribeBundle(orgId: string, bundleId: string): Promise<unknown> {
  return unwrap(client.POST(`${API}/org/{orgId}/bundle/{bundleId}`, { params: { path: { orgId, bundleId } }, body: { id: bundleId } }));
}

export function unsubscribeBundle(orgId: string, bundleId: string): Promise<unknown> {
  return unwrap(client.DELETE(`${API}/org/{orgId}/bundle/{bundleId}`, { params: { path: { orgId, bundleId } } }));
}
