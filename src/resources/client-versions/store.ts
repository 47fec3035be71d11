/** The client-versions index: the stored override of the default agent versions (one document). */
import { DocStore } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../domain.js';

export interface DefaultVersionsDoc {
  linux: string;
  mac: string;
  windows: string;
  updatedAt: string;
  updatedBy: UserKey;
}

const DEFAULT_ID = 'default';

export class ClientVersionStore {
  private readonly docs: DocStore<DefaultVersionsDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<DefaultVersionsDoc>(ctx, 'client-versions', 'client version override');
  }

  async getOverride(): Promise<DefaultVersionsDoc | undefined> {
    return (await this.docs.get(DEFAULT_ID))?.doc;
  }

  async putOverride(doc: DefaultVersionsDoc): Promise<void> {
    await this.docs.put(DEFAULT_ID, doc);
  }

  /** Removes the override; true when there was one. */
  async clearOverride(): Promise<boolean> {
    try {
      await this.docs.delete(DEFAULT_ID);
      return true;
    } catch (err) {
      if ((err as { status?: number }).status === 404) return false;
      throw err;
    }
  }
}
