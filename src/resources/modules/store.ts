/**
 * The enabled-modules index: one EnabledModules document per endpoint (`endpoint:<id>`) and
 * one per organization (`org:<orgId>`), in one index so the effective status of a module
 * for an endpoint is one multi-get.
 */
import { DocStore, type Stored, type WriteOptions } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { EnabledModulesDoc, ModuleScope } from './model.js';

export function moduleDocId(scope: ModuleScope, id: string): string {
  return `${scope}:${id}`;
}

export class EnabledModulesStore {
  private readonly docs: DocStore<EnabledModulesDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<EnabledModulesDoc>(ctx, 'enabled-modules', 'enabled modules of');
  }

  /** One realtime get of a scope's record. */
  get(scope: ModuleScope, id: string): Promise<Stored<EnabledModulesDoc> | undefined> {
    return this.docs.get(moduleDocId(scope, id));
  }

  /** The endpoint's and the organization's records in one multi-get. */
  async getPair(
    endpointId: string,
    orgId: string,
  ): Promise<{ endpoint?: Stored<EnabledModulesDoc>; org?: Stored<EnabledModulesDoc> }> {
    const hits = await this.docs.getMany([moduleDocId('endpoint', endpointId), moduleDocId('org', orgId)]);
    return {
      endpoint: hits.find((h) => h.id === moduleDocId('endpoint', endpointId)),
      org: hits.find((h) => h.id === moduleDocId('org', orgId)),
    };
  }

  /** Create-only: ConflictError when the record exists. */
  create(doc: EnabledModulesDoc, opts: WriteOptions = {}): Promise<Stored<EnabledModulesDoc>> {
    return this.docs.create(moduleDocId(doc.scope, doc.id), doc, opts);
  }

  /** Full replace, conditional on the seq_no/primary_term of a read. */
  replace(
    doc: EnabledModulesDoc,
    cond: { if_seq_no: number; if_primary_term: number },
  ): Promise<Stored<EnabledModulesDoc>> {
    return this.docs.put(moduleDocId(doc.scope, doc.id), doc, cond);
  }
}
