/**
 * The licenses index: one LicenseInfo document per license id. The document carries its
 * own `version`, written as the `_version` the write produces (1 on create, read + 1 on a
 * replace conditional on that read), so LicenseCriteria can match it.
 */
import { DocStore, type Query, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { LicenseDoc } from './model.js';
import type { OrgScopedIndex } from '../../store/org-path.js';
import { conditionOn } from '../../store/doc-types.js';

/** Its records keep their organization in `orgId`, and so carry its ancestry (src/store/org-path.ts). */
export const LICENSES_ORG_SCOPE: OrgScopedIndex = { index: 'licenses', orgField: 'orgId' };

export class LicenseStore {
  private readonly docs: DocStore<LicenseDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<LicenseDoc>(ctx, LICENSES_ORG_SCOPE.index, 'license', { orgField: LICENSES_ORG_SCOPE.orgField });
  }

  get(id: string): Promise<Stored<LicenseDoc> | undefined> {
    return this.docs.get(id);
  }

  /** Create-only: ConflictError when the id exists. */
  create(doc: LicenseDoc): Promise<Stored<LicenseDoc>> {
    return this.docs.create(doc.id, { ...doc, version: 1 });
  }

  /** Replaces the document read as `cur` (ConflictError when it changed since). */
  replace(doc: LicenseDoc, cur: Stored<LicenseDoc>): Promise<Stored<LicenseDoc>> {
    return this.docs.put(
      doc.id,
      { ...doc, version: cur.version + 1 },
      conditionOn(cur),
    );
  }

  count(query: Query): Promise<number> {
    return this.docs.count(query);
  }
}
