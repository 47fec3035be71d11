/** The command-message-deliveries index: one EndpointCommandMessageDelivery per message uuid. */
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import { ConflictError } from '../../errors.js';
import type { DeliveryDoc, EndpointCommandMessageDelivery } from './model.js';

export function toDelivery(hit: Stored<DeliveryDoc>): EndpointCommandMessageDelivery {
  return { ...hit.doc, version: hit.version };
}

export class DeliveryStore {
  private readonly docs: DocStore<DeliveryDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<DeliveryDoc>(ctx, 'command-message-deliveries', 'command message delivery');
  }

  get(uuid: string): Promise<Stored<DeliveryDoc> | undefined> {
    return this.docs.get(uuid);
  }

  /**
   * Records a delivery, keyed by the message uuid. A full write, so a retry after a
   * failure is idempotent; readers use realtime get, so no refresh is forced.
   */
  put(doc: DeliveryDoc): Promise<Stored<DeliveryDoc>> {
    return this.docs.put(doc.uuid, doc, { refresh: false });
  }

  /** Records a delivery unless one is recorded (a create; an existing record is left as it is). */
  async ensure(doc: DeliveryDoc): Promise<void> {
    try {
      await this.docs.create(doc.uuid, doc, { refresh: false });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
}
