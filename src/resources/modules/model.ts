/** Spec 2.4: enabled modules, their dynamic status and the organization summary. */

import { MODULE_NAMES, type ModuleName } from '../module-names.js';

export const DYNAMIC_MODULE_STATUSES = ['PENDING', 'ACTIVE', 'INACTIVE'] as const;
export type DynamicModuleStatus = (typeof DYNAMIC_MODULE_STATUSES)[number];

export type ModuleFields = Partial<Record<ModuleName, DynamicModuleStatus>>;

/** Whose record it is: one per endpoint and one per organization. */
export type ModuleScope = 'endpoint' | 'org';

/** EnabledModules as the API shows it (spec 2.4). `id` is the endpoint id or the organization id. */
export interface EnabledModules extends ModuleFields {
  id: string;
  orgId: string;
  version: number;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** The stored document: the record without its version, plus the scope and the org's bundle subscriptions. */
export interface EnabledModulesDoc extends ModuleFields {
  scope: ModuleScope;
  id: string;
  orgId: string;
  /** Bundles the organization subscribes to (org records only; not part of EnabledModules). */
  subscribedBundles?: string[];
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** OrgEnabledModules (spec 2.4): the UI summary for the caller's organization. */
export interface OrgEnabledModules {
  avEnabled: boolean;
  fimEnabled: boolean;
  panEnabled: boolean;
  windowsEventLogEnabled: boolean;
}

/** The module fields present in a document or body. */
export function moduleFieldsOf(src: ModuleFields): ModuleFields {
  const out: ModuleFields = {};
  for (const m of MODULE_NAMES) {
    const v = src[m];
    if (v !== undefined) out[m] = v;
  }
  return out;
}
