/**
 * The org-license-contracts index: one document per (orgId, type), keyed `<orgId>:<type>`
 * so uniqueness is the create-only write. The document carries its own `version`, written
 * as the `_version` the write produces, so criteria can match it.
 */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, type Query, type SearchResult, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { LicenseType } from '../licenses/model.js';
import { contractId, type OrgLicenseContractDoc } from './model.js';
import { PitSearch } from '../../store/scan.js';
import type { OrgScopedIndex } from '../../store/org-path.js';
import { conditionOn } from '../../store/doc-types.js';

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const LICENSE_CONTRACTS_ORG_SCOPE: OrgScopedIndex = { index: 'org-license-contracts', orgField: 'orgId' };

export class OrgLicenseContractStore {
  private readonly docs: DocStore<OrgLicenseContractDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<OrgLicenseContractDoc>(ctx, LICENSE_CONTRACTS_ORG_SCOPE.index, 'license contract', { orgField: LICENSE_CONTRACTS_ORG_SCOPE.orgField });
  }

  get(orgId: string, type: LicenseType): Promise<Stored<OrgLicenseContractDoc> | undefined> {
    return this.docs.get(contractId(orgId, type));
  }

  /** Every contract of one organization (at most one per license type), in one realtime multi-get. */
  ofOrg(orgId: string, types: readonly LicenseType[]): Promise<Stored<OrgLicenseContractDoc>[]> {
    return this.docs.getMany(types.map((t) => contractId(orgId, t)));
  }

  /** Create-only: ConflictError when the pair exists. */
  create(doc: OrgLicenseContractDoc): Promise<Stored<OrgLicenseContractDoc>> {
    return this.docs.create(doc.id, { ...doc, version: 1 });
  }

  /** Replaces the document read as `cur` (ConflictError when it changed since). */
  replace(doc: OrgLicenseContractDoc, cur: Stored<OrgLicenseContractDoc>): Promise<Stored<OrgLicenseContractDoc>> {
    return this.docs.put(doc.id, { ...doc, version: cur.version + 1 }, conditionOn(cur));
  }

  /** A search prepared for deep reads on a point in time (cursors and exports). */
  deep<R>(query: Query, sort: estypes.SortCombinations[], toRecord: (hit: Stored<OrgLicenseContractDoc>) => R): PitSearch<OrgLicenseContractDoc, R> {
    return new PitSearch(this.docs, query, sort, toRecord);
  }

  search(query: Query, page: { from: number; size: number; sort: estypes.SortCombinations[] }): Promise<SearchResult<OrgLicenseContractDoc>> {
    return this.docs.search({ query, ...page, track_total_hits: true });
  }
}
