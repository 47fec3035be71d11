/**
 * The reads that decide an endpoint operation's 404/403/409, and the partial update made
 * conditional on such a read: shared by the endpoint service's parts.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Stored } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { FAMILY_NOUN, FAMILY_TYPES, type EndpointDoc, type EndpointType, type Family } from './model.js';
import type { EndpointStore } from './store.js';

export class EndpointReads {
  constructor(private readonly store: EndpointStore) {}

  /**
   * The endpoint if it exists, is not deleted, is of one of `types` (when given) and is
   * visible to the caller: 404 otherwise, 403 when it exists outside the caller's reach.
   */
  async getVisible(id: string, access: Access, types?: readonly EndpointType[]): Promise<Stored<EndpointDoc>> {
    access.assertAgentSelf(id);
    const hit = await this.store.get(id);
    if (!hit || hit.doc.deleted || (types && !types.includes(hit.doc.type))) {
      throw new NotFoundError(`endpoint ${id} not found`);
    }
    await access.assertEndpoint(hit.id, hit.doc.orgId);
    return hit;
  }

  /** A visible endpoint of one family (404 naming the family for another family's id). */
  async getFamilyHit(id: string, family: Family, access: Access): Promise<Stored<EndpointDoc>> {
    access.assertAgentSelf(id);
    const hit = await this.store.get(id);
    if (!hit || hit.doc.deleted || !FAMILY_TYPES[family].includes(hit.doc.type)) {
      throw new NotFoundError(`${FAMILY_NOUN[family]} ${id} not found`);
    }
    await access.assertEndpoint(hit.id, hit.doc.orgId);
    return hit;
  }

  /**
   * An endpoint something is to be done to: 404 when unknown, 403 outside the caller's
   * reach, 409 when it is deleted or UNINSTALLED (it exists, but cannot act).
   */
  async getActionable(id: string, access: Access): Promise<Stored<EndpointDoc>> {
    access.assertAgentSelf(id);
    const hit = await this.store.get(id);
    if (!hit) throw new NotFoundError(`endpoint ${id} not found`);
    await access.assertEndpoint(hit.id, hit.doc.orgId);
    if (hit.doc.deleted) throw new ConflictError(`endpoint ${id} is deleted`);
    if (hit.doc.connectionStatus === 'UNINSTALLED') throw new ConflictError(`endpoint ${id} is UNINSTALLED`);
    return hit;
  }

  /**
   * Read (404/403 decided on it, by `read` or getVisible) then a partial update conditional
   * on that read, read again when a concurrent writer got in between.
   */
  async patchAfterRead(
    id: string,
    access: Access,
    partial: (hit: Stored<EndpointDoc>) => Partial<EndpointDoc>,
    opts: { refresh?: false; read?: (id: string) => Promise<Stored<EndpointDoc>> } = {},
  ): Promise<Stored<EndpointDoc>> {
    return readModifyWrite(async () => {
      const hit = opts.read ? await opts.read(id) : await this.getVisible(id, access);
      return this.store.patch(id, partial(hit), {
        ...(opts.refresh === false ? { refresh: false } : {}),
        if_seq_no: hit.seqNo,
        if_primary_term: hit.primaryTerm,
      });
    });
  }
}
