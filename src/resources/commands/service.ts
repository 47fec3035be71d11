/**
 * The one command pipeline (spec 4.8 and 4.5's ioc and uninstall-protect): every action on an
 * endpoint becomes an EndpointCommandMessage in status CREATED, stored for the endpoint's
 * socket gateway to deliver; the gateway moves it through the status machine (status.ts).
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { toPage, type Page, type PageRequest } from '../../domain.js';
import { pageQuery } from '../../store/page-query.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { conditionOn, type Query, type Stored, type WriteOptions } from '../../store/doc-types.js';
import type { SeqNoPrimaryTerm } from '../../store/versions.js';
import type { EndpointDoc } from '../endpoints/model.js';
import type { EndpointService } from '../endpoints/service.js';
import { catalogueOsOf, commandsFor, type CommandCatalogue } from './catalogue.js';
import type { CommandMessageDoc, CommandMessageStatus, DeliveryDoc, EndpointCommandMessage, EndpointCommandMessageDelivery, EffectiveCommandMessageStatus, NewMessage } from './model.js';
import { canMoveCommandMessage } from './status.js';
import { toCommandMessage, type CommandMessageStore } from './store.js';
import { toDelivery, type DeliveryStore } from './delivery-store.js';
import { CommandExpiry } from './expiry.js';
import { CommandBatch, newMessageDoc } from './batch.js';

/** Where the `cmd` module's effective status comes from (the modules resource's service). */
export interface ModuleStatusSource {
  effectiveModuleStatus(
    endpointId: string,
    orgId: string,
    module: 'cmd',
  ): Promise<'PENDING' | 'ACTIVE' | 'INACTIVE' | undefined>;
}

/** The antivirus vendor's installation on an endpoint, when registered (vendor-data resource). */
export interface VendorInstallationSource {
  antivirusInstallation(endpointId: string): Promise<{ uniqueId: string; companyId: string; hardwareId: string } | undefined>;
}

export interface CommandRequest {
  command: string;
  args?: string[];
  /** Extension: the message's lifetime instead of ECS_COMMAND_TTL. */
  ttlSeconds?: number;
}

/** Expiry, bounded retries, and presence (a status reported for an endpoint is a sign of life). */
export interface CommandOptions {
  expiry?: CommandExpiry;
  /** The endpoints' presence (src/resources/endpoints/presence.ts). */
  presence?: { seenBeside(endpointId: string): Promise<void> };
}

export const SUPPORT_INFORMATION_MODES = ['BASIC', 'FULL', 'DEBUG'] as const;
export type SupportInformationMode = (typeof SUPPORT_INFORMATION_MODES)[number];

export interface SupportInformationRequest {
  endpointId: string;
  mode: SupportInformationMode;
}

/** The agent product uninstall-protect names (spec 2.4's Vendor value for the antivirus). */
export const UNINSTALL_PROTECT_PRODUCT = 'ANTIVIRUS_VENDOR';

/** How strictly an action needs its endpoint: any live endpoint, or a CONNECTED one. */
type Readiness = 'live' | 'connected';

export class CommandService {
  constructor(
    private readonly messages: CommandMessageStore,
    private readonly deliveries: DeliveryStore,
    private readonly endpoints: EndpointService,
    private readonly modules: ModuleStatusSource,
    private readonly vendors: VendorInstallationSource,
    private readonly catalogue: CommandCatalogue,
    opts: CommandOptions = {},
  ) {
    this.expiry = opts.expiry ?? new CommandExpiry({ ttlSeconds: 86_400, maxRetries: 5 });
    this.presence = opts.presence;
    this.batch = new CommandBatch(messages, this.expiry, (endpointId) => this.ready?.(endpointId));
  }
  private readonly expiry: CommandExpiry;
  private readonly presence?: CommandOptions['presence'];
  ready?: (endpointId: string) => void; // the agent channel's wake: a message became ready (created, or moved to RETRY)
  /** Messages for many endpoints at once, under ids their caller derives (rollouts). */
  readonly batch: CommandBatch;

  /** The API record, expiry applied (EXPIRED is read, never stored). */
  private record(hit: Stored<CommandMessageDoc>): EndpointCommandMessage {
    const rec = toCommandMessage(hit);
    return this.expiry.isExpired(hit.doc) ? { ...rec, status: 'EXPIRED' } : rec;
  }

  /**
   * The endpoint an action targets: 404 unknown, 403 outside the caller's reach, 409 when
   * deleted or UNINSTALLED, and (for `connected`) 409 when not CONNECTED.
   */
  private async target(endpointId: string, access: Access, readiness: Readiness): Promise<Stored<EndpointDoc>> {
    const hit = await this.endpoints.getActionable(endpointId, access);
    const status = hit.doc.connectionStatus ?? 'NEVER';
    if (readiness === 'connected' && status !== 'CONNECTED') {
      throw new ConflictError(`endpoint ${endpointId} is ${status}, not CONNECTED`);
    }
    return hit;
  }

  /**
   * Queues a message under `createdId` (an Idempotency-Key's, src/http/idempotency.ts) or a
   * random id; a `createdId` that exists is an earlier attempt of the same request, answered as it is now.
   */
  private async enqueue(ep: Stored<EndpointDoc>, msg: NewMessage, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    const doc = newMessageDoc(createdId ?? crypto.randomUUID(), { endpointId: ep.id, orgId: ep.doc.orgId }, msg, access.userKey, this.expiry, this.expiry.now());
    try {
      return this.record(await this.messages.create(doc).then((saved) => (this.ready?.(ep.id), saved)));
    } catch (err) {
      // The id is always the server's (the key's or a random UUID): an existing message under it is an
      // earlier attempt of this request (a keyed retry, or Elasticsearch re-sending the create).
      const earlier = err instanceof ConflictError ? await this.messages.get(doc.id) : undefined;
      if (earlier && earlier.doc.endpointId === ep.id) {
        // The earlier attempt's answer was lost, perhaps before its visibility wait: this answer keeps the guarantee.
        await this.messages.visible();
        return this.record(earlier);
      }
      throw err;
    }
  }

  /** POST /command-message/endpoint/{endpoint-id}: a raw message, queued even while disconnected. */
  async createMessage(endpointId: string, msg: NewMessage, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    return this.enqueue(await this.target(endpointId, access, 'live'), msg, access, createdId);
  }

  /** GET /command-message/{id}. */
  async getMessage(id: string, access: Access): Promise<EndpointCommandMessage> {
    const hit = await this.messages.get(id);
    if (!hit) throw new NotFoundError(`command message ${id} not found`);
    await access.assertEndpoint(hit.doc.endpointId, hit.doc.orgId);
    return this.record(hit);
  }

  /**
   * GET /command-message/endpoint/{endpoint-id}: oldest first, optionally one status (as it
   * reads now: CREATED and RETRY leave expired messages out, EXPIRED selects them). The
   * endpoint's own agent never receives an expired message.
   */
  async listMessages(
    endpointId: string,
    status: EffectiveCommandMessageStatus | undefined,
    pr: PageRequest,
    access: Access,
  ): Promise<Page<EndpointCommandMessage>> {
    await this.endpoints.getVisible(endpointId, access);
    const filter: Query[] = [{ term: { endpointId } }];
    if (status) filter.push(this.expiry.statusFilter(status));
    const mustNot: Query[] = access.role === 'agent' ? [this.expiry.expiredQuery()] : [];
    const res = await this.messages.search(
      { bool: { filter, must_not: mustNot } },
      pageQuery({ ...pr, sort: [] }, { createdAt: 'createdAt' }, [{ field: 'createdAt', direction: 'ASC' }]),
    );
    return toPage(pr, res.total, res.items.map((h) => this.record(h)));
  }

  /**
   * PATCH /command-message/{id}/status/{status}: one move of the status machine, atomic
   * against concurrent moves; a stale `version` (when sent) → 409. SENT records a delivery.
   * An expired message cannot move (409); a move into RETRY beyond ECS_COMMAND_MAX_RETRIES
   * fails the message instead (MSG_SEND_FAIL with a failureReason). A failure move may carry
   * its reason. The move is a sign of life of the endpoint when its agent reports it or when
   * the message was delivered (SENT).
   *
   * `moveId` names the request: an Idempotency-Key's id (src/http/idempotency.ts), or a random
   * one. Each move stores its id in the message, so the one request that wrote it, and only
   * that one, is recognised when it comes again (docs/adr/0111-command-moves-named-by-their-caller.md).
   */
  async moveStatus(
    id: string,
    requested: CommandMessageStatus,
    version: SeqNoPrimaryTerm | undefined,
    access: Access,
    reason?: string,
    moveId: string = crypto.randomUUID(),
  ): Promise<EndpointCommandMessage> {
    // A rival's write between the read and the conditional write: the move is judged again from
    // the state that write left (a sent version is then stale: 409), never answered 409 unjudged.
    return readModifyWrite(() => this.moveOnce(id, requested, version, access, reason, moveId, {}));
  }

  /**
   * The agent channel's claim of a message for one of its channels: the same move, answered as
   * soon as the store acknowledged its conditional write, without waiting for searches to see
   * it (docs/adr/0126-channel-claim-answers-at-acknowledgement.md). Exactly once rests on the
   * conditional write alone; the frame leaves a refresh earlier. Other moves wait as always.
   */
  async claim(id: string, requested: CommandMessageStatus, access: Access, reason?: string): Promise<EndpointCommandMessage> {
    if (requested !== 'SENT') return this.moveStatus(id, requested, undefined, access, reason);
    const claimed = await readModifyWrite(() => this.moveOnce(id, requested, undefined, access, reason, crypto.randomUUID(), { refresh: false }));
    // Searches see it after one shared refresh, started now and not awaited (a failed one: after the scheduled refresh).
    this.messages.visible().catch(() => undefined);
    return claimed;
  }

  private async moveOnce(
    id: string,
    requested: CommandMessageStatus,
    version: SeqNoPrimaryTerm | undefined,
    access: Access,
    reason: string | undefined,
    moveId: string,
    visibility: WriteOptions,
  ): Promise<EndpointCommandMessage> {
    const hit = await this.messages.get(id);
    if (!hit) throw new NotFoundError(`command message ${id} not found`);
    await access.assertEndpoint(hit.doc.endpointId, hit.doc.orgId);
    // The caller repeats a move of its own that landed (its answer lost, or its delivery write
    // failed): the first outcome again, the delivery completed. Before the version check: the
    // repeat carries the version read before its own move.
    const mine = hit.doc.moveIds?.findIndex((m) => m.split(' ')[0] === moveId) ?? -1;
    if (mine >= 0) return this.landed(hit, mine);
    if (version && (version.sequenceNumber !== hit.seqNo || version.primaryTerm !== hit.primaryTerm)) {
      throw new ConflictError(
        `stale version ${version.sequenceNumber}/${version.primaryTerm}: the message is at ${hit.seqNo}/${hit.primaryTerm}; re-read it and retry`,
      );
    }
    const from = hit.doc.status;
    if (this.expiry.isExpired(hit.doc)) {
      throw new ConflictError(`command message ${id} expired at ${hit.doc.expiresAt ?? 'its default expiry'}; it cannot move to ${requested}`);
    }
    if (!canMoveCommandMessage(from, requested)) {
      // A SENT message has its delivery record, whatever failed after its status write (a lost
      // answer repeated without a key, a stopped process): the refusal completes it (docs/adr/0133).
      if (from === 'SENT') await this.deliveries.ensure(this.deliveryOf(hit.doc, hit.doc.updatedBy.username, hit.doc.updatedAt));
      throw new ConflictError(`command message ${id} cannot move from ${from} to ${requested}`);
    }
    const partial: Partial<CommandMessageDoc> = {};
    let to = requested;
    if (to === 'RETRY') {
      if (this.expiry.retriesExhausted(hit.doc)) {
        to = 'MSG_SEND_FAIL';
        partial.failureReason = `retries exhausted: ${this.expiry.opts.maxRetries} allowed (ECS_COMMAND_MAX_RETRIES)`;
      } else {
        partial.retries = (hit.doc.retries ?? 0) + 1;
      }
    } else if (reason !== undefined && to !== 'SENT') {
      partial.failureReason = reason;
    }
    const now = new Date().toISOString();
    const by = access.userKey;
    // Beside the move, never its outcome: a refused stamp must not answer a landed move 503 (docs/adr/0133).
    const signOfLife = this.presence && (access.role === 'agent' || to === 'SENT') ? this.presence.seenBeside(hit.doc.endpointId) : undefined;
    // Every move a message can take (its retries, then one final move) keeps its id.
    // Each entry: the move's id, the status it set and the retries it left (what its repeat answers).
    const moveIds = [...(hit.doc.moveIds ?? []), `${moveId} ${to} ${partial.retries ?? hit.doc.retries ?? 0}`].slice(-(this.expiry.opts.maxRetries + 2));
    const change: Partial<CommandMessageDoc> = { ...partial, status: to, updatedAt: now, updatedBy: by, moveIds };
    const [updated] = await Promise.all([this.patchOnce(id, change, hit, visibility), signOfLife]);
    if (to === 'SENT') {
      // After the status write: SENT is final and the write above is conditional, so exactly
      // one move gets here per message; the delivery write is a keyed full write (idempotent).
      await this.recordDelivery(hit.doc, by.username, now);
    }
    if (to === 'RETRY') this.ready?.(hit.doc.endpointId);
    return this.record(updated);
  }

  /**
   * A move of this caller's that is already in the message (entry `at` of its moves): a SENT one
   * completes its delivery record. A move that later moves followed answers the status and
   * retries it set, with the message's current version (a stale one for any further move).
   */
  private async landed(hit: Stored<CommandMessageDoc>, at: number): Promise<EndpointCommandMessage> {
    // SENT is final, so a message that is SENT and holds the move's id was sent by that move, at its last update.
    if (hit.doc.status === 'SENT') await this.recordDelivery(hit.doc, hit.doc.updatedBy.username, hit.doc.updatedAt);
    const [, status, retries] = (hit.doc.moveIds ?? [])[at].split(' ');
    const last = at === (hit.doc.moveIds ?? []).length - 1;
    return last || !status ? this.record(hit) : { ...this.record(hit), status: status as CommandMessageStatus, retries: Number(retries) };
  }

  /** The move's conditional write; a write Elasticsearch re-sent is recognised by the store (docs/adr/0125-conditional-writes-recognise-themselves.md). */
  private patchOnce(id: string, change: Partial<CommandMessageDoc>, read: Stored<CommandMessageDoc>, visibility: WriteOptions): Promise<Stored<CommandMessageDoc>> {
    return this.messages.patch(id, change, conditionOn(read), visibility);
  }

  /** The message's delivery record (keyed by its uuid; a full write, so repeating it is harmless). */
  private async recordDelivery(doc: CommandMessageDoc, by: string, at: string): Promise<void> {
    await this.deliveries.put(this.deliveryOf(doc, by, at));
  }

  private deliveryOf(doc: CommandMessageDoc, by: string, at: string): DeliveryDoc {
    return { uuid: doc.uuid, endpointId: doc.endpointId, orgId: doc.orgId, status: 'DELIVERED', createdBy: by, updatedBy: by, createdAt: at, updatedAt: at };
  }

  /** GET /command-message/delivery/{uuid} (extension). */
  async getDelivery(uuid: string, access: Access): Promise<EndpointCommandMessageDelivery> {
    const hit = await this.deliveries.get(uuid);
    if (!hit) throw new NotFoundError(`no delivery recorded for command message ${uuid}`);
    await access.assertEndpoint(hit.doc.endpointId, hit.doc.orgId);
    return toDelivery(hit);
  }

  /** The catalogue names the endpoint accepts: its OS's commands, when its cmd module is ACTIVE. */
  private async accepted(ep: Stored<EndpointDoc>): Promise<string[]> {
    const cmd = await this.modules.effectiveModuleStatus(ep.id, ep.doc.orgId, 'cmd');
    return cmd === 'ACTIVE' ? commandsFor(this.catalogue, catalogueOsOf(ep.doc.hostInfo)) : [];
  }

  /** GET /command/endpoint/{endpointId}. */
  async listCommands(endpointId: string, access: Access): Promise<string[]> {
    return this.accepted(await this.endpoints.getVisible(endpointId, access));
  }

  /** POST /command/endpoint/{endpointId}. */
  async runCommand(endpointId: string, req: CommandRequest, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    const ep = await this.target(endpointId, access, 'connected');
    const accepted = await this.accepted(ep);
    if (!accepted.includes(req.command)) {
      throw new ValidationError(
        `body.command: ${req.command} is not accepted by endpoint ${endpointId} (accepted: ${accepted.join(', ') || 'none'})`,
      );
    }
    return this.enqueue(ep, { module: 'cmd', name: req.command, payload: { args: req.args ?? [] }, ttlSeconds: req.ttlSeconds }, access, createdId);
  }

  /** POST /csi: run the support-information utility in a mode. */
  async requestSupportInformation(req: SupportInformationRequest, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    const ep = await this.target(req.endpointId, access, 'connected');
    return this.enqueue(ep, { module: 'support', name: 'csi', payload: { mode: req.mode } }, access, createdId);
  }

  /** POST /endpoint/{id}/dynamic-module/ioc: fetch new IOC rules from an https URL. */
  async updateIocRules(endpointId: string, rulesUrl: string, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    const ep = await this.target(endpointId, access, 'connected');
    return this.enqueue(ep, { module: 'iocDetection', name: 'update-rules', payload: { rulesUrl } }, access, createdId);
  }

  /** POST /endpoint/{endpointId}/uninstall-protect: uninstall the antivirus product. */
  async uninstallProtect(endpointId: string, access: Access, createdId?: string): Promise<EndpointCommandMessage> {
    const ep = await this.target(endpointId, access, 'connected');
    const installation = await this.vendors.antivirusInstallation(ep.id);
    const payload: Record<string, unknown> = { product: UNINSTALL_PROTECT_PRODUCT };
    if (installation) Object.assign(payload, installation);
    return this.enqueue(ep, { module: 'antivirus', name: 'uninstall-protect', payload }, access, createdId);
  }
}
