/** The bundles index: the catalogue of module bundles, one document per bundle id. */
import type { estypes } from '@elastic/elasticsearch';
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { ModuleName } from '../module-names.js';

export interface BundleDoc {
  id: string;
  name: string;
  description: string;
  modules: ModuleName[];
  /** Where the definition came from: the catalogue file or the admin operation. */
  source: 'catalogue' | 'admin';
  /** The catalogue file version the definition belongs to (a newer file replaces it at start-up). */
  catalogueVersion: number;
  updatedAt: string;
  updatedBy: string;
}

/** The catalogue is small; one search answers it whole. */
const MAX_BUNDLES = 1000;

export class BundleStore {
  private readonly docs: DocStore<BundleDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<BundleDoc>(ctx, 'bundles', 'bundle');
  }

  get(id: string): Promise<Stored<BundleDoc> | undefined> {
    return this.docs.get(id);
  }

  getMany(ids: string[]): Promise<Stored<BundleDoc>[]> {
    return this.docs.getMany(ids);
  }

  /** Every bundle, by id. */
  async list(): Promise<BundleDoc[]> {
    const res = await this.docs.search({ query: { match_all: {} }, size: MAX_BUNDLES, sort: [{ id: 'asc' }] });
    return res.items.map((h) => h.doc);
  }

  /** Adds or replaces one bundle. */
  async put(doc: BundleDoc): Promise<BundleDoc> {
    return (await this.docs.put(doc.id, doc)).doc;
  }

  /**
   * Writes catalogue bundles in one bulk request: `create` for new ids, `index` conditional on
   * the read for stored ones, so a concurrent writer (another instance loading the same file,
   * or the admin operation) wins instead of being overwritten. Answers the ids written.
   */
  async writeCatalogue(writes: { doc: BundleDoc; current?: Stored<BundleDoc> }[]): Promise<string[]> {
    if (writes.length === 0) return [];
    const operations: estypes.BulkRequest['operations'] = [];
    for (const { doc, current } of writes) {
      operations.push(
        current ? { index: { _id: doc.id, if_seq_no: current.seqNo, if_primary_term: current.primaryTerm } } : { create: { _id: doc.id } },
        doc,
      );
    }
    const res = await this.docs.bulk(operations);
    const written: string[] = [];
    for (const item of res.items) {
      const r = item.index ?? item.create;
      if (!r) continue;
      if (r.error && r.status !== 409) throw new Error(`bundle ${r._id}: ${r.error.reason ?? r.error.type}`);
      if (!r.error && r._id) written.push(r._id);
    }
    return written;
  }
}
