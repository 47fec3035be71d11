/** The command-messages index: every EndpointCommandMessage; the only code that touches it. */
import { DocStore, type Query, type SearchResult, type Stored, type WriteOptions } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { PageQuery } from '../../store/page-query.js';
import { toSeqNoPrimaryTerm } from '../../store/versions.js';
import type { CommandMessageDoc, EndpointCommandMessage } from './model.js';

/** Maps a stored message to the API record with its SeqNoPrimaryTerm version. */
export function toCommandMessage(hit: Stored<CommandMessageDoc>): EndpointCommandMessage {
  const { moveIds: _moveIds, ...doc } = hit.doc;
  return { ...doc, version: toSeqNoPrimaryTerm(hit) };
}

export class CommandMessageStore {
  private readonly docs: DocStore<CommandMessageDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<CommandMessageDoc>(ctx, 'command-messages', 'command message');
  }

  /** Create-only write with the store's default refresh (the gateway lists new messages by search). */
  create(doc: CommandMessageDoc, opts?: WriteOptions): Promise<Stored<CommandMessageDoc>> {
    return this.docs.create(doc.id, doc, opts);
  }

  /**
   * Create-only writes of many messages in one bulk request, searchable when it returns; the
   * ids created now (an id that exists is kept as it is; any other refusal throws).
   */
  async createMany(docs: CommandMessageDoc[]): Promise<string[]> {
    const res = await this.docs.bulk(docs.flatMap((d) => [{ create: { _id: d.id } }, d]));
    const refused = res.items.find((i) => i.create?.error && i.create.status !== 409);
    if (refused) throw new Error(`command messages not stored: ${refused.create?.error?.reason ?? 'unknown'}`);
    return res.items.flatMap((i) => (i.create && !i.create.error ? [i.create._id as string] : []));
  }

  /** Many messages by id in one multi-get; absent ones are left out. */
  getMany(ids: string[]): Promise<Stored<CommandMessageDoc>[]> {
    return this.docs.getMany(ids);
  }

  /** Resolves once every write acknowledged before the call is searchable (src/store/visibility.ts). */
  visible(): Promise<void> {
    return this.docs.visible();
  }

  /** Realtime get; undefined when absent. */
  get(id: string): Promise<Stored<CommandMessageDoc> | undefined> {
    return this.docs.get(id);
  }

  /** One partial update, conditional on the seq_no/primary_term of the read it follows. */
  patch(
    id: string,
    partial: Partial<CommandMessageDoc>,
    cond: { if_seq_no: number; if_primary_term: number },
    opts: WriteOptions = {},
  ): Promise<Stored<CommandMessageDoc>> {
    return this.docs.patch(id, partial, { ...cond, ...opts });
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<CommandMessageDoc>> {
    return this.docs.search({ query, ...page });
  }
}
