/**
 * Endpoint rules (spec 4.2, 4.3, 4.5): reads, create, replace, JSON Patch and delete here;
 * connection-state updates, unique keys and queries in their own parts (`connections`,
 * `keys`, `queries`). Other resources reach endpoints only through this service, never
 * through the store.
 */
import crypto from 'node:crypto';
import type { Operation } from 'fast-json-patch';
import type { Access } from '../../access/access.js';
import { BadRequestError, ConflictError } from '../../errors.js';
import type { Stored } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { checkIntegerVersion } from '../../store/versions.js';
import { ConnectionStateUpdates } from './connection-state.js';
import { applyUtmPatch, assertPatchable, type EndpointInput } from './json-patch.js';
import type { EndpointKeyStore } from './keys-store.js';
import { endpointKeys, FAMILY_DEFAULT_TYPE, isScannerSubject, type EndpointDoc, type EndpointRecord, type EndpointType, type Family } from './model.js';
import { EndpointQueries } from './queries.js';
import { AgentScan } from './agent-scan.js';
import { EndpointReads } from './reads.js';
import { toEndpointRecord, type EndpointStore } from './store.js';
import { UniqueKeys } from './unique-keys.js';

export type { EndpointInput } from './json-patch.js';
export { DuplicateKeyError } from './unique-keys.js';

/** What the endpoint service needs from other resources. */
export interface EndpointDeps {
  keys: EndpointKeyStore;
  orgs: { children(orgId: string): Promise<string[]>; descendants(orgId: string): Promise<string[]> };
  tokens: { revokeForEndpoint(endpointId: string): Promise<void> };
}

/** Dates parsed by joi → ISO 8601 strings, as stored and returned. */
function isoDates<T>(value: T): T {
  if (value instanceof Date) return value.toISOString() as T;
  if (Array.isArray(value)) return value.map((v: unknown) => isoDates(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isoDates(v)])) as T;
  }
  return value;
}

export class EndpointService {
  private readonly reads: EndpointReads;
  /** Connection-state updates (the hot path) and the other state endpoints report. */
  readonly connections: ConnectionStateUpdates;
  /** Unique lookup keys: claims and lookups by serial, MAC, common name, IMEI + site. */
  readonly keys: UniqueKeys;
  /** Lists, page searches, counts and aggregations. */
  readonly queries: EndpointQueries;
  /** Long reads over the agents matching criteria, for bulk work (jobs). */
  readonly agentScan: AgentScan;

  constructor(
    private readonly store: EndpointStore,
    private readonly deps: EndpointDeps,
  ) {
    this.reads = new EndpointReads(store);
    this.keys = new UniqueKeys(store, deps.keys);
    this.connections = new ConnectionStateUpdates(store, this.reads, this.keys);
    this.queries = new EndpointQueries(store, deps.orgs);
    this.agentScan = new AgentScan(store);
  }

  /**
   * The endpoint if it exists, is not deleted, is of one of `types` (when given) and is
   * visible to the caller: 404 otherwise, 403 when it exists outside the caller's reach.
   */
  getVisible(id: string, access: Access, types?: readonly EndpointType[]): Promise<Stored<EndpointDoc>> {
    return this.reads.getVisible(id, access, types);
  }

  /**
   * An endpoint something is to be done to: 404 when unknown, 403 outside the caller's
   * reach, 409 when it is deleted or UNINSTALLED (it exists, but cannot act).
   */
  getActionable(id: string, access: Access): Promise<Stored<EndpointDoc>> {
    return this.reads.getActionable(id, access);
  }

  /** The API record of a visible endpoint. */
  async getRecord(id: string, access: Access, types?: readonly EndpointType[]): Promise<EndpointRecord> {
    return toEndpointRecord(await this.reads.getVisible(id, access, types));
  }

  /** A visible record of one family (404 for another family's id). */
  async getFamilyRecord(id: string, family: Family, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.reads.getFamilyHit(id, family, access));
  }

  private buildDoc(id: string, input: EndpointInput, family: Family, access: Access, prev?: EndpointDoc): EndpointDoc {
    const { version: _version, id: _id, deleted: _deleted, ...fields } = isoDates(input);
    const now = new Date().toISOString();
    const doc: EndpointDoc = {
      ...fields,
      id,
      orgId: fields.orgId ?? (prev?.orgId as string),
      type: fields.type ?? prev?.type ?? FAMILY_DEFAULT_TYPE[family],
      // A state is never absent: a new record has NEVER connected; a replace keeps the reported one.
      connectionStatus: fields.connectionStatus ?? prev?.connectionStatus ?? 'NEVER',
      deleted: false,
      ...(prev?.lastSeen ? { lastSeen: prev.lastSeen } : {}),
      createdAt: prev?.createdAt ?? now,
      createdBy: prev?.createdBy ?? access.userKey,
      updatedAt: now,
      updatedBy: access.userKey,
    };
    if (family === 'agent') doc.scanner = isScannerSubject(doc.certSubject);
    if (family === 'utm' && prev?.interfaces) doc.interfaces = prev.interfaces;
    return doc;
  }

  /**
   * Creates a record of a family; 409 when it exists or a unique key is held. Without `input.id`
   * the record takes `createdId` (an Idempotency-Key's, src/http/idempotency.ts) or a random id;
   * a `createdId` that exists is an earlier attempt of the same request, answered as it is now.
   */
  async create(input: EndpointInput, family: Family, access: Access, createdId?: string): Promise<EndpointRecord> {
    const orgId = input.orgId ?? access.principal.orgId;
    if (!orgId) throw new BadRequestError('body.orgId: required');
    await access.assertOrg(orgId);
    const id = input.id ?? createdId ?? crypto.randomUUID();
    const doc = this.buildDoc(id, { ...input, orgId }, family, access);
    const claimed = await this.keys.claim(id, endpointKeys(doc));
    let saved: Stored<EndpointDoc>;
    try {
      // Visibility is awaited after the try: a failed wait must not release the keys of a record that was written.
      saved = await this.store.create(doc, { refresh: false });
    } catch (err) {
      // A server-generated id (the key's or a random UUID) that exists can only be an earlier attempt of
      // this very request: a retry with its Idempotency-Key, or Elasticsearch re-sending the create after
      // a primary moved (docs/reliability.md, cluster node loss). Answer that record; never a 409.
      const earlier = err instanceof ConflictError && input.id === undefined ? await this.store.get(id) : undefined;
      if (earlier && !earlier.doc.deleted) {
        // The keys the earlier attempt's record holds are its own: release only the others.
        const held = endpointKeys(earlier.doc);
        await this.keys.release(id, claimed.filter((k) => !held.includes(k)));
        // The earlier attempt's answer was lost, perhaps before its visibility wait: this answer keeps the guarantee.
        await this.store.visible();
        return toEndpointRecord(earlier);
      }
      await this.keys.release(id, claimed);
      if (err instanceof ConflictError) throw new ConflictError(`endpoint ${id} already exists`);
      throw err;
    }
    await this.store.visible();
    return toEndpointRecord(saved);
  }

  /**
   * Replaces a record of a family (PUT, LTE update). `input.version`, when given, must be the
   * current one (409 otherwise); the write is conditional on the read either way.
   */
  async replace(id: string, input: EndpointInput, family: Family, access: Access): Promise<EndpointRecord> {
    if (input.id !== undefined && input.id !== id) throw new BadRequestError(`body.id: ${input.id} does not match the path id ${id}`);
    const hit = await this.reads.getFamilyHit(id, family, access);
    const cond = checkIntegerVersion(input.version, hit);
    return this.write(hit, input, family, access, cond);
  }

  /** Writes the new state of a read record: org move checked, unique keys moved, conditional on the read. */
  private async write(
    hit: Stored<EndpointDoc>,
    input: EndpointInput,
    family: Family,
    access: Access,
    cond: { if_seq_no: number; if_primary_term: number },
  ): Promise<EndpointRecord> {
    if (input.orgId !== undefined && input.orgId !== hit.doc.orgId) await access.assertOrg(input.orgId);
    const doc = this.buildDoc(hit.id, input, family, access, hit.doc);
    const before = endpointKeys(hit.doc);
    const after = endpointKeys(doc);
    const claimed = await this.keys.claim(
      hit.id,
      after.filter((k) => !before.includes(k)),
    );
    let saved: Stored<EndpointDoc>;
    try {
      saved = await this.store.replace(doc, cond, { refresh: false });
    } catch (err) {
      await this.keys.release(hit.id, claimed);
      throw err;
    }
    await this.keys.release(
      hit.id,
      before.filter((k) => !after.includes(k)),
    );
    await this.store.visible();
    return toEndpointRecord(saved);
  }

  /**
   * Applies an RFC 6902 patch to a UTM record: 405 when an operation changes a server-owned
   * field, 400 when the patch cannot be applied or its result is not a valid UtmEndpoint.
   * Re-applied on a fresh read when a concurrent writer got in between.
   */
  async jsonPatch(id: string, ops: Operation[], access: Access): Promise<EndpointRecord> {
    assertPatchable(ops);
    // A DuplicateKeyError (a held MAC or serial) is the caller's 409; a write lost to another writer reads again.
    return readModifyWrite(async () => {
      const hit = await this.reads.getFamilyHit(id, 'utm', access);
      const input = applyUtmPatch(toEndpointRecord(hit), ops);
      return this.write(hit, { ...input, version: undefined }, 'utm', access, {
        if_seq_no: hit.seqNo,
        if_primary_term: hit.primaryTerm,
      });
    });
  }

  /** Soft delete: 404 afterwards everywhere; frees its unique keys and revokes its agent tokens. */
  async softDelete(id: string, access: Access): Promise<void> {
    const hit = await this.reads.patchAfterRead(
      id,
      access,
      () => ({
        deleted: true,
        updatedAt: new Date().toISOString(),
        updatedBy: access.userKey,
      }),
      { refresh: false },
    );
    await this.keys.release(id, endpointKeys({ ...hit.doc, deleted: false }));
    // One visibility wait per index touched, in parallel, rather than one per write.
    await Promise.all([this.store.visible(), this.deps.tokens.revokeForEndpoint(id)]);
  }
}
