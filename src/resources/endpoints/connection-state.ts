/**
 * Connection-state updates of endpoints (the hot path: connect, disconnect, uninstall,
 * fim-hoh) and the other state an endpoint reports (addresses, UTM status, WAN interfaces).
 */
import type { Access } from '../../access/access.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { carrierWan, type ConnectionStatus, type EndpointDoc, type EndpointRecord, type InterfaceStatus, type WanStatus } from './model.js';
import type { EndpointReads } from './reads.js';
import { toEndpointRecord, type EndpointStore } from './store.js';
import type { UniqueKeys } from './unique-keys.js';
import { conditionOn } from '../../store/doc-types.js';

/** A v-prefixed semantic version as an agent reports it (v3.10.2, v3.11.0-rc.1). */
export const V_SEMVER = /^v(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export class ConnectionStateUpdates {
  constructor(
    private readonly store: EndpointStore,
    private readonly reads: EndpointReads,
    private readonly keys: UniqueKeys,
  ) {}

  /**
   * One partial update without a forced refresh. An agent token is bound to its endpoint and
   * a system token sees everything, so theirs is the single round trip: the update answers
   * the document, and a deleted one is 404 (the write to an invisible record is harmless).
   * Org-scoped tokens need the record's org first: a read decides 404/403, then the same
   * last-write-wins update (docs/adr/0007-group-commit-of-connection-state.md: why not conditional on the read).
   */
  private async update(id: string, partial: Partial<EndpointDoc>, access: Access): Promise<void> {
    access.assertAgentSelf(id);
    if (access.role !== 'agent' && !access.unrestricted) await this.reads.getVisible(id, access);
    // Group commit: concurrent updates share one bulk request (EndpointStore.updateConnectionState).
    const { deleted } = await this.store.updateConnectionState(id, partial);
    if (deleted) throw new NotFoundError(`endpoint ${id} not found`);
  }

  /** The endpoint opened its socket: CONNECTED (also after UNINSTALLED: a reinstall). */
  connect(id: string, access: Access): Promise<void> {
    return this.update(id, { connectionStatus: 'CONNECTED', lastConnect: new Date().toISOString() }, access);
  }

  disconnect(id: string, access: Access): Promise<void> {
    return this.update(id, { connectionStatus: 'DISCONNECTED', lastDisconnect: new Date().toISOString() }, access);
  }

  /**
   * The agent's channel dropped and it did not come back within ECS_CHANNEL_GRACE_SECONDS: a
   * CONNECTED endpoint reads POTENTIALLY_DISCONNECTED (only the agent itself says DISCONNECTED).
   */
  async channelLost(id: string, access: Access): Promise<void> {
    access.assertAgentSelf(id);
    const [hit] = await this.store.getMany([id]);
    if (!hit || hit.doc.deleted || hit.doc.connectionStatus !== 'CONNECTED') return;
    await this.store.updateConnectionState(id, { connectionStatus: 'POTENTIALLY_DISCONNECTED' });
  }

  /** The agent took up a channel again after its grace ran out: CONNECTED, unless it said otherwise meanwhile. */
  async channelBack(id: string, access: Access): Promise<void> {
    access.assertAgentSelf(id);
    const [hit] = await this.store.getMany([id]);
    if (!hit || hit.doc.deleted || hit.doc.connectionStatus !== 'POTENTIALLY_DISCONNECTED') return;
    await this.store.updateConnectionState(id, { connectionStatus: 'CONNECTED' });
  }

  uninstall(id: string, access: Access): Promise<void> {
    return this.update(id, { connectionStatus: 'UNINSTALLED' }, access);
  }

  /**
   * The agent version the endpoint runs now (a v-prefixed semantic version): the agent's own
   * report, through the same group commit as its other bookkeeping, so it is also a sign of life.
   */
  setClientVersion(id: string, version: string, access: Access): Promise<void> {
    // The route's schema checks it; the agent channel's check-in (?clientVersion=) calls this directly.
    if (!V_SEMVER.test(version)) throw new ValidationError(`"${version}" is not a v-prefixed semantic version (e.g. v3.10.2)`);
    return this.update(id, { clientVersion: version }, access);
  }

  setFimHoh(id: string, hoh: string, access: Access): Promise<void> {
    return this.update(id, { fimHoh: hoh }, access);
  }

  /**
   * Internal and external addresses; 409 for an UNINSTALLED or deleted endpoint. The store's
   * default refresh: both feed the `basic` free-text search, and addresses change rarely.
   */
  async setAddresses(id: string, internalIps: string[], externalIp: string, access: Access): Promise<void> {
    await this.reads.patchAfterRead(id, access, () => ({ internalIps, lastIp: externalIp, lastSeen: new Date().toISOString() }), {
      read: (eid) => this.reads.getActionable(eid, access),
    });
  }

  /** Sets a UTM's connection status; the read decides its family and the caller's reach. */
  async setUtmConnectionStatus(id: string, status: ConnectionStatus, access: Access): Promise<void> {
    const now = new Date().toISOString();
    await this.reads.patchAfterRead(
      id,
      access,
      () => ({
        connectionStatus: status,
        ...(status === 'CONNECTED' ? { lastConnect: now } : {}),
        ...(status === 'DISCONNECTED' ? { lastDisconnect: now } : {}),
      }),
      { refresh: false, read: (eid) => this.reads.getFamilyHit(eid, 'utm', access) },
    );
  }

  /** Records a WAN interface report of the UTM with this serial and recomputes `wanStatus`. */
  async reportInterface(serial: string, name: WanStatus, status: InterfaceStatus, access: Access): Promise<EndpointRecord> {
    return readModifyWrite(async () => {
      const hit = await this.keys.findHit('utm-serial', serial, 'utm', access);
      const interfaces = { ...(hit.doc.interfaces ?? {}), [name]: status };
      const saved = await this.store.patch(
        hit.id,
        { interfaces, wanStatus: carrierWan(interfaces, hit.doc.wanStatus), updatedAt: new Date().toISOString(), updatedBy: access.userKey },
        conditionOn(hit),
      );
      return toEndpointRecord(saved);
    });
  }
}
