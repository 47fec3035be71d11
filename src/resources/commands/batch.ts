/**
 * Command messages for many endpoints at once (rollouts): the same messages the pipeline
 * queues one by one (service.ts `enqueue`, both through `newMessageDoc`), created in one bulk request under ids the caller
 * derives from what it does, so a caller that replays a batch after a crash meets the messages
 * already there and nothing is sent twice. Each message created is announced ready, as one
 * queued alone is (held agents get it at once). Their statuses are read back in one multi-get.
 */
import crypto from 'node:crypto';
import type { UserKey } from '../../domain.js';
import type { CommandExpiry } from './expiry.js';
import type { CommandMessageDoc, EffectiveCommandMessageStatus, NewMessage } from './model.js';
import type { CommandMessageStore } from './store.js';

/** One message of a batch: its deterministic id, its endpoint and what it says. */
export interface BatchMessage {
  id: string;
  endpointId: string;
  orgId: string;
  message: NewMessage;
}

/** A message as the pipeline stores it when queued: CREATED under `id` for `endpoint`, its expiry from `nowMs`. */
export function newMessageDoc(
  id: string,
  endpoint: { endpointId: string; orgId: string },
  msg: NewMessage,
  by: UserKey,
  expiry: CommandExpiry,
  nowMs: number,
): CommandMessageDoc {
  const now = new Date(nowMs).toISOString();
  return {
    id,
    status: 'CREATED',
    endpointId: endpoint.endpointId,
    orgId: endpoint.orgId,
    module: msg.module,
    name: msg.name,
    uuid: crypto.randomUUID(),
    ts: now,
    payload: msg.payload ?? {},
    createdBy: by,
    updatedBy: by,
    createdAt: now,
    updatedAt: now,
    expiresAt: expiry.expiresAt(nowMs, msg.ttlSeconds),
    retries: 0,
  };
}

export class CommandBatch {
  constructor(
    private readonly messages: CommandMessageStore,
    private readonly expiry: CommandExpiry,
    /** A message became ready for its endpoint: the agent channel delivers it to an agent it holds (service.ts `ready`). */
    private readonly ready: (endpointId: string) => void = () => undefined,
  ) {}

  /**
   * Queues every message in one bulk create, searchable for the gateway when it returns; the
   * ids that were created now (a message already under its id is an earlier attempt, left as it is).
   */
  async enqueueMany(items: BatchMessage[], by: UserKey): Promise<string[]> {
    if (items.length === 0) return [];
    const nowMs = this.expiry.now();
    const docs = items.map((it) => newMessageDoc(it.id, it, it.message, by, this.expiry, nowMs));
    const created = await this.messages.createMany(docs);
    const endpointOf = new Map(items.map((it) => [it.id, it.endpointId]));
    for (const id of created) {
      const endpointId = endpointOf.get(id);
      if (endpointId !== undefined) this.ready(endpointId);
    }
    return created;
  }

  /** The status of each message as it reads now (EXPIRED applied), by id; absent ids are left out. */
  async statuses(ids: string[]): Promise<Map<string, EffectiveCommandMessageStatus>> {
    const out = new Map<string, EffectiveCommandMessageStatus>();
    if (ids.length === 0) return out;
    for (const hit of await this.messages.getMany(ids)) out.set(hit.id, this.expiry.effectiveStatus(hit.doc));
    return out;
  }
}
