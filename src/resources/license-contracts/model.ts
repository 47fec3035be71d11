/** Spec 2.5 OrgLicenseContract: one per (organization, license type). */
import type { LicenseType } from '../licenses/model.js';

export interface OrgLicenseContract {
  orgId: string;
  type: LicenseType;
  expirationDate?: string;
  nbrLicensesPurchased?: number;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** The stored document: the record plus its key `id` = `<orgId>:<type>` (paging tiebreaker). */
export interface OrgLicenseContractDoc extends OrgLicenseContract {
  id: string;
}

export function contractId(orgId: string, type: LicenseType): string {
  return `${orgId}:${type}`;
}
