/** The organizations index: the only code that touches it. */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../http/auth.js';

export interface OrganizationDoc {
  id: string;
  name: string;
  parentId?: string;
  /** Ids from the root down to the parent: a subtree query is one term on this field. */
  ancestors: string[];
  createdAt: string;
  createdBy: UserKey;
}

export class OrganizationStore {
  private readonly docs: DocStore<OrganizationDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<OrganizationDoc>(ctx, 'organizations', 'organization');
  }

  /** Realtime get by id. */
  get(id: string): Promise<OrganizationDoc | undefined> {
    return this.docs.get(id).then((h) => h?.doc);
  }

  /** Create-only; 409 when the id exists. */
  async create(doc: OrganizationDoc): Promise<OrganizationDoc> {
    await this.docs.create(doc.id, doc);
    return doc;
  }

  /** Every organization's id and parent, streamed (for the in-memory tree). */
  async allLinks(): Promise<{ id: string; parentId?: string }[]> {
    const out: { id: string; parentId?: string }[] = [];
    for await (const batch of this.docs.scan({ match_all: {} }, { batchSize: 5000 })) {
      for (const h of batch) out.push({ id: h.doc.id, parentId: h.doc.parentId });
    }
    return out;
  }
}
