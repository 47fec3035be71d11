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

  /** Realtime get; undefined when absent. */
  /** Resolves once every write acknowledged before the call is searchable (src/store/visibility.ts). */
  visible(): Promise<void> {
    return this.docs.visible();
  }

  get(id: string): Promise<Stored<CommandMessageDoc> | undefined> {
    return this.docs.get(id);
  }

  /** One partial update, conditional on the seq_no/primary_term of the read it follows. */
  patch(
    id: string,
    partial: Partial<CommandMessageDoc>,
    cond: { if_seq_no: number; if_primary_term: number },
  ): Promise<Stored<CommandMessageDoc>> {
    return this.docs.patch(id, partial, cond);
  }

  search(query: Query, page: PageQuery): Promise<SearchResult<CommandMessageDoc>> {
    return this.docs.search({ query, ...page });
  }
}
