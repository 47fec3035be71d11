/**
 * The record of the organization move in progress, or of the last one (docs/adr/0086): one
 * document in the `control` index. It is written create-only or conditional on the seq_no just
 * read, so of two moves started at once exactly one is accepted; while it is RUNNING no other
 * move starts, which keeps the compensation reads apply during a move to one term (docs/adr/0087).
 */
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { conditionOn } from '../../store/doc-types.js';

export type OrgMoveState = 'RUNNING' | 'DONE';

export interface OrgMove {
  orgId: string;
  /** Ids from the root down to the old parent (empty: it was a root). */
  from: string[];
  /** Ids from the root down to the new parent (empty: it became a root). */
  to: string[];
  state: OrgMoveState;
  /** Records whose ancestry the move's task has rewritten so far. */
  recordsRewritten: number;
  startedAt: string;
  finishedAt?: string;
}

interface MoveDoc {
  kind: 'org-move';
  move: OrgMove;
  changedAt: string;
}

const ID = 'org-move';

export class OrgMoveStore {
  private readonly docs: DocStore<MoveDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<MoveDoc>(ctx, 'control', 'organization move');
  }

  /** The current or last move with the version a conditional write needs (realtime get). */
  async get(): Promise<Stored<OrgMove> | undefined> {
    const s = await this.docs.get(ID);
    return s ? { ...s, doc: s.doc.move } : undefined;
  }

  /** Records `move` if the record is unchanged since `cur` was read (created when there was none); 409 otherwise. */
  async begin(move: OrgMove, cur: Stored<OrgMove> | undefined): Promise<Stored<OrgMove>> {
    const doc: MoveDoc = { kind: 'org-move', move, changedAt: new Date().toISOString() };
    const s = cur
      ? await this.docs.put(ID, doc, { refresh: false, ...conditionOn(cur) })
      : await this.docs.create(ID, doc, { refresh: false });
    return { ...s, doc: move };
  }

  /** Progress or the end of the running move (the task is its only writer). */
  async save(move: OrgMove): Promise<void> {
    await this.docs.put(ID, { kind: 'org-move', move, changedAt: new Date().toISOString() }, { refresh: false });
  }
}
