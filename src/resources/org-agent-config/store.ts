/** The org-agent-configs index: one agent Config per organization, keyed by orgId. */
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../domain.js';
import type { ConfigFields } from './model.js';

export interface OrgAgentConfigDoc {
  orgId: string;
  /** Free-form for the index (`enabled: false`): validated by joi, never searched. */
  fields: ConfigFields;
  /** fields.presenceTimeoutSeconds, mapped so the few overriding organizations are found by one search. */
  presenceTimeoutSeconds?: number;
  createdAt: string;
  createdBy: UserKey;
  updatedAt: string;
  updatedBy: UserKey;
}

export class OrgAgentConfigStore {
  private readonly docs: DocStore<OrgAgentConfigDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<OrgAgentConfigDoc>(ctx, 'org-agent-configs', 'organization agent configuration');
  }

  get(orgId: string): Promise<Stored<OrgAgentConfigDoc> | undefined> {
    return this.docs.get(orgId);
  }

  /** Organizations whose configuration sets a presence timeout → seconds (at most 10,000). */
  async presenceTimeouts(): Promise<Map<string, number>> {
    const res = await this.docs.search({
      query: { exists: { field: 'presenceTimeoutSeconds' } },
      size: 10_000,
      _source: ['orgId', 'presenceTimeoutSeconds'],
    });
    return new Map(res.items.map((h) => [h.doc.orgId, h.doc.presenceTimeoutSeconds as number]));
  }

  /** Full replace (last write wins), with the store's default refresh. */
  put(doc: OrgAgentConfigDoc): Promise<Stored<OrgAgentConfigDoc>> {
    return this.docs.put(doc.orgId, doc);
  }
}
