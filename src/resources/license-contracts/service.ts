/**
 * Organization license contracts (spec 4.7): one per (orgId, type); create, read by org and
 * by org and type, replace with an integer version, and paged search by criteria.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { toPage, type Page } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import type { PageRequest, SortOrder } from '../../domain.js';
import type { Query, Stored } from '../../store/doc-store.js';
import { checkIntegerVersion } from '../../store/versions.js';
import { LICENSE_TYPES, type LicenseType } from '../licenses/model.js';
import type { OrganizationService } from '../organizations/service.js';
import { contractId, type OrgLicenseContract, type OrgLicenseContractDoc } from './model.js';
import type { OrgLicenseContractStore } from './store.js';
import type { PitSearch } from '../../store/scan.js';

/** An OrgLicenseContract body after validation (server-owned fields stripped, dates as Date). */
export interface OrgLicenseContractInput {
  orgId?: string;
  type?: LicenseType;
  expirationDate?: Date;
  nbrLicensesPurchased?: number;
  version?: number;
}

export interface OrgLicenseContractCriteria {
  orgId?: string;
  type?: LicenseType;
  version?: number;
}

/** API sort names → indexed fields for searchPage. */
export const CONTRACT_SORT_FIELDS: Readonly<Record<string, string>> = {
  orgId: 'orgId',
  type: 'type',
  expirationDate: 'expirationDate',
  nbrLicensesPurchased: 'nbrLicensesPurchased',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  version: 'version',
};

const CONTRACT_DEFAULT_SORT: SortOrder[] = [
  { field: 'orgId', direction: 'ASC' },
  { field: 'type', direction: 'ASC' },
];

export function toOrgLicenseContract(hit: Stored<OrgLicenseContractDoc>): OrgLicenseContract {
  const d = hit.doc;
  return {
    orgId: d.orgId,
    type: d.type,
    ...(d.expirationDate !== undefined ? { expirationDate: d.expirationDate } : {}),
    ...(d.nbrLicensesPurchased !== undefined ? { nbrLicensesPurchased: d.nbrLicensesPurchased } : {}),
    createdBy: d.createdBy,
    updatedBy: d.updatedBy,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    version: hit.version,
  };
}

function terms(input: OrgLicenseContractInput): Pick<OrgLicenseContractDoc, 'expirationDate' | 'nbrLicensesPurchased'> {
  return {
    ...(input.expirationDate !== undefined ? { expirationDate: input.expirationDate.toISOString() } : {}),
    ...(input.nbrLicensesPurchased !== undefined ? { nbrLicensesPurchased: input.nbrLicensesPurchased } : {}),
  };
}

export class OrgLicenseContractService {
  constructor(
    private readonly store: OrgLicenseContractStore,
    private readonly orgs: OrganizationService,
  ) {}

  /** POST: creates the contract of (orgId, type); 404 for an unregistered organization, 409 when it exists. */
  async create(input: OrgLicenseContractInput & { orgId: string; type: LicenseType }, access: Access): Promise<OrgLicenseContract> {
    await access.assertOrg(input.orgId);
    await this.orgs.assertExists(input.orgId);
    const now = new Date().toISOString();
    const by = access.userKey.username;
    const doc: OrgLicenseContractDoc = {
      id: contractId(input.orgId, input.type),
      orgId: input.orgId,
      type: input.type,
      ...terms(input),
      createdBy: by,
      updatedBy: by,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    try {
      return toOrgLicenseContract(await this.store.create(doc));
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new ConflictError(`organization ${input.orgId} already has a ${input.type} contract; use PUT to replace it`);
      }
      throw err;
    }
  }

  /** Every contract of the organization (one per license type it has), in type order. */
  async ofOrg(orgId: string, access: Access): Promise<OrgLicenseContract[]> {
    await access.assertOrg(orgId);
    return (await this.store.ofOrg(orgId, LICENSE_TYPES)).map(toOrgLicenseContract);
  }

  /** The contract of (orgId, type); 404 when there is none. */
  async get(orgId: string, type: LicenseType, access: Access): Promise<OrgLicenseContract> {
    await access.assertOrg(orgId);
    const hit = await this.store.get(orgId, type);
    if (!hit) throw new NotFoundError(`organization ${orgId} has no ${type} contract`);
    return toOrgLicenseContract(hit);
  }

  /** PUT: replaces the contract's terms; 404 when there is none, 409 on a stale version. */
  async replace(orgId: string, type: LicenseType, input: OrgLicenseContractInput, access: Access): Promise<OrgLicenseContract> {
    if (input.orgId !== undefined && input.orgId !== orgId) {
      throw new ValidationError(`body.orgId: "${input.orgId}" does not match the organization ${orgId} of the path`);
    }
    if (input.type !== undefined && input.type !== type) {
      throw new ValidationError(`body.type: "${input.type}" does not match the type ${type} of the path`);
    }
    await access.assertOrg(orgId);
    const cur = await this.store.get(orgId, type);
    if (!cur) throw new NotFoundError(`organization ${orgId} has no ${type} contract; create it with POST /org-license-contract`);
    checkIntegerVersion(input.version, cur);
    const doc: OrgLicenseContractDoc = {
      id: cur.doc.id,
      orgId,
      type,
      ...terms(input),
      createdBy: cur.doc.createdBy,
      updatedBy: access.userKey.username,
      createdAt: cur.doc.createdAt,
      updatedAt: new Date().toISOString(),
      version: cur.version,
    };
    return toOrgLicenseContract(await this.store.replace(doc, cur));
  }

  /** searchPage: contracts matching every given criterion, within the caller's subtree. */
  async searchPage(
    criteria: OrgLicenseContractCriteria,
    pageRequest: PageRequest,
    access: Access,
  ): Promise<Page<OrgLicenseContract>> {
    const q = pageQuery(pageRequest, CONTRACT_SORT_FIELDS, CONTRACT_DEFAULT_SORT);
    const res = await this.store.search(await this.contractQuery(criteria, access), q);
    return toPage(pageRequest, res.total, res.items.map(toOrgLicenseContract));
  }

  /** The same search prepared for cursors and exports. */
  async deepSearch(
    criteria: OrgLicenseContractCriteria,
    pageRequest: PageRequest,
    access: Access,
  ): Promise<PitSearch<OrgLicenseContractDoc, OrgLicenseContract>> {
    const sort = pageQuery({ ...pageRequest, page: 0 }, CONTRACT_SORT_FIELDS, CONTRACT_DEFAULT_SORT).sort;
    return this.store.deep(await this.contractQuery(criteria, access), sort, toOrgLicenseContract);
  }

  private async contractQuery(criteria: OrgLicenseContractCriteria, access: Access): Promise<Query> {
    const filter: Query[] = [];
    if (criteria.orgId !== undefined) {
      await access.assertOrg(criteria.orgId);
      filter.push({ term: { orgId: criteria.orgId } });
    }
    if (criteria.type !== undefined) filter.push({ term: { type: criteria.type } });
    if (criteria.version !== undefined) filter.push({ term: { version: criteria.version } });
    const scope = await access.orgFilter('orgId');
    if (scope) filter.push(scope);
    return { bool: { filter } };
  }
}
