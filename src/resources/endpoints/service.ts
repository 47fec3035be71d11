/**
 * Endpoint rules (spec 4.2, 4.3, 4.5). Other resources reach endpoints only through this
 * service (`getVisible`), never through the store.
 */
import crypto from 'node:crypto';
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type Joi from 'joi';
import type { Access } from '../../http/auth.js';
import { BadRequestError, ConflictError, MethodNotAllowedError, NotFoundError } from '../../errors.js';
import { pageQuery, toPage, type Page, type PageRequest } from '../../http/paging.js';
import { validatePart } from '../../http/routes.js';
import type { Query, Stored } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { checkIntegerVersion } from '../../store/versions.js';
import {
  endpointCriteriaQuery,
  familyQuery,
  lteCriteriaQuery,
  utmCriteriaQuery,
  type EndpointCriteria,
  type LteEndpointCriteria,
  type UtmCriteria,
} from './criteria.js';
import type { EndpointKeyStore } from './keys-store.js';
import {
  carrierWan,
  endpointKeys,
  FAMILY_DEFAULT_TYPE,
  FAMILY_NOUN,
  FAMILY_TYPES,
  imeiSiteValue,
  isScannerSubject,
  lookupKey,
  SERVER_OWNED_FIELDS,
  type ConnectionStatus,
  type EndpointDoc,
  type EndpointKeyKind,
  type EndpointRecord,
  type EndpointType,
  type Family,
  type InterfaceStatus,
  type WanStatus,
} from './model.js';
import { endpointBody, ENDPOINT_SORT, LTE_SORT, UTM_SORT } from './schema.js';
import { hitToEndpointRecord, toEndpointRecord, type EndpointStore } from './store.js';

/** A validated request body of one family (dates already parsed by joi). */
export type EndpointInput = Partial<Omit<EndpointDoc, 'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy' | 'interfaces' | 'scanner'>> & {
  version?: number;
};

/** What the endpoint service needs from other resources. */
export interface EndpointDeps {
  keys: EndpointKeyStore;
  orgs: { children(orgId: string): Promise<string[]>; descendants(orgId: string): Promise<string[]> };
  tokens: { revokeForEndpoint(endpointId: string): Promise<void> };
}

/** Records a list answers from one search before it streams. */
const LIST_BATCH = 1000;
/** A key claimed this recently is not taken over even if its holder does not show it yet (a write in flight). */
const KEY_GRACE_MS = 60_000;

const KEY_FIELD: Record<EndpointKeyKind, string> = {
  'utm-serial': 'serialId',
  'utm-mac': 'lastMacAddress',
  'utm-common-name': 'commonName',
  'lte-imei-site': 'imei + site.id',
};

/** 409: a unique lookup value (serial, MAC, common name, IMEI + site) belongs to another endpoint. */
export class DuplicateKeyError extends ConflictError {}

/** Dates parsed by joi → ISO 8601 strings, as stored and returned. */
function isoDates<T>(value: T): T {
  if (value instanceof Date) return value.toISOString() as T;
  if (Array.isArray(value)) return value.map((v: unknown) => isoDates(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isoDates(v)])) as T;
  }
  return value;
}

function describeKey(key: string): string {
  const kind = key.slice(0, key.indexOf(':')) as EndpointKeyKind;
  let value = key.slice(key.indexOf(':') + 1);
  if (kind === 'lte-imei-site') value = (JSON.parse(value) as string[]).join(' at site ');
  return `${KEY_FIELD[kind] ?? 'key'} ${value}`;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * The top-level field a JSON pointer addresses ('' for the whole document); undefined for a
 * malformed pointer (applying the patch then answers 400).
 */
function topField(pointer: string): string | undefined {
  if (pointer === '') return '';
  if (!pointer.startsWith('/')) return undefined;
  return unescapePointer(pointer.split('/')[1] ?? '');
}

export class EndpointService {
  constructor(
    readonly store: EndpointStore,
    private readonly deps?: EndpointDeps,
  ) {}

  private get d(): EndpointDeps {
    if (!this.deps) throw new Error('EndpointService was built without its dependencies');
    return this.deps;
  }

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

  /** The API record of a visible endpoint. */
  async getRecord(id: string, access: Access, types?: readonly EndpointType[]): Promise<EndpointRecord> {
    return toEndpointRecord(await this.getVisible(id, access, types));
  }

  /** A visible record of one family (404 for another family's id). */
  async getFamilyRecord(id: string, family: Family, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.getFamilyHit(id, family, access));
  }

  // ---- create, replace, JSON Patch, delete ------------------------------------------------

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
    const claimed = await this.claimKeys(id, endpointKeys(doc));
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
        await this.releaseKeys(id, claimed.filter((k) => !held.includes(k)));
        // The earlier attempt's answer was lost, perhaps before its visibility wait: this answer keeps the guarantee.
        await this.store.visible();
        return toEndpointRecord(earlier);
      }
      await this.releaseKeys(id, claimed);
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
    const hit = await this.getFamilyHit(id, family, access);
    const cond = checkIntegerVersion(input.version, hit);
    return this.write(hit, input, family, access, cond);
  }

  private async getFamilyHit(id: string, family: Family, access: Access): Promise<Stored<EndpointDoc>> {
    access.assertAgentSelf(id);
    const hit = await this.store.get(id);
    if (!hit || hit.doc.deleted || !FAMILY_TYPES[family].includes(hit.doc.type)) {
      throw new NotFoundError(`${FAMILY_NOUN[family]} ${id} not found`);
    }
    await access.assertEndpoint(hit.id, hit.doc.orgId);
    return hit;
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
    const claimed = await this.claimKeys(
      hit.id,
      after.filter((k) => !before.includes(k)),
    );
    let saved: Stored<EndpointDoc>;
    try {
      saved = await this.store.replace(doc, cond, { refresh: false });
    } catch (err) {
      await this.releaseKeys(hit.id, claimed);
      throw err;
    }
    await this.releaseKeys(
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
    for (const op of ops) {
      const touched = [op.path, ...(op.op === 'move' ? [(op as { from?: string }).from ?? ''] : [])];
      if (op.op === 'test') continue;
      for (const pointer of touched) {
        const field = topField(pointer);
        if (field === undefined) continue;
        if (field === '' || (SERVER_OWNED_FIELDS as readonly string[]).includes(field)) {
          throw new MethodNotAllowedError(`${op.op} ${pointer || '/'}: ${field || 'the whole record'} is owned by the server and cannot be patched`);
        }
      }
    }
    // The result must be a whole UtmEndpoint: unlike a PUT body it cannot lean on the stored orgId.
    const schema: Joi.Schema = endpointBody('utm').fork(['orgId'], (f) => f.required());
    // A DuplicateKeyError (a held MAC or serial) is the caller's 409; a write lost to another writer reads again.
    return readModifyWrite(async () => {
      const hit = await this.getFamilyHit(id, 'utm', access);
      let patched: EndpointRecord;
      try {
        patched = jsonpatch.applyPatch(jsonpatch.deepClone(toEndpointRecord(hit)) as EndpointRecord, ops, true, true).newDocument;
      } catch (err) {
        if (err instanceof jsonpatch.JsonPatchError) {
          throw new BadRequestError(`body[${err.index ?? 0}]: ${err.name}: ${err.message.split('\n')[0]}`);
        }
        // The library refuses __proto__/constructor paths with a TypeError.
        if (err instanceof TypeError) throw new BadRequestError(`body: ${err.message}`);
        throw err;
      }
      const input = validatePart<EndpointInput>(schema, patched, 'body');
      return this.write(hit, { ...input, version: undefined }, 'utm', access, {
        if_seq_no: hit.seqNo,
        if_primary_term: hit.primaryTerm,
      });
    });
  }

  /** Soft delete: 404 afterwards everywhere; frees its unique keys and revokes its agent tokens. */
  async softDelete(id: string, access: Access): Promise<void> {
    const hit = await this.conditionalPatch(
      id,
      access,
      () => ({
        deleted: true,
        updatedAt: new Date().toISOString(),
        updatedBy: access.userKey,
      }),
      { refresh: false },
    );
    await this.releaseKeys(id, endpointKeys({ ...hit.doc, deleted: false }));
    // One visibility wait per index touched, in parallel, rather than one per write.
    await Promise.all([this.store.visible(), this.d.tokens.revokeForEndpoint(id)]);
  }

  /**
   * Read (404/403 decided on it) then a partial update conditional on that read, re-read
   * when a concurrent writer got in between. `check` may refuse the current state.
   */
  private async conditionalPatch(
    id: string,
    access: Access,
    partial: (hit: Stored<EndpointDoc>) => Partial<EndpointDoc>,
    opts: { refresh?: false; types?: readonly EndpointType[]; read?: (id: string) => Promise<Stored<EndpointDoc>> } = {},
  ): Promise<Stored<EndpointDoc>> {
    return readModifyWrite(async () => {
      const hit = opts.read ? await opts.read(id) : await this.getVisible(id, access, opts.types);
      return this.store.patch(id, partial(hit), {
        ...(opts.refresh === false ? { refresh: false } : {}),
        if_seq_no: hit.seqNo,
        if_primary_term: hit.primaryTerm,
      });
    });
  }

  // ---- connection bookkeeping (the hot path) ---------------------------------------------

  /**
   * One partial update without a forced refresh. An agent token is bound to its endpoint and
   * a system token sees everything, so theirs is the single round trip: the update answers
   * the document, and a deleted one is 404 (the write to an invisible record is harmless).
   * Org-scoped tokens need the record's org first: a read decides 404/403, then the same
   * last-write-wins update. (A write conditional on that read turned concurrent notifications
   * into 409s, which these operations do not declare; a record moved out of the caller's
   * subtree between the read and the write gets one bookkeeping update, as if the call had
   * come a moment earlier.)
   */
  private async bookkeep(id: string, partial: Partial<EndpointDoc>, access: Access): Promise<void> {
    access.assertAgentSelf(id);
    if (access.role !== 'agent' && !access.unrestricted) await this.getVisible(id, access);
    // Group commit: concurrent notifications share one bulk request (EndpointStore.bookkeep).
    const { deleted } = await this.store.bookkeep(id, partial);
    if (deleted) throw new NotFoundError(`endpoint ${id} not found`);
  }

  /** The endpoint opened its socket: CONNECTED (also after UNINSTALLED: a reinstall). */
  connect(id: string, access: Access): Promise<void> {
    return this.bookkeep(id, { connectionStatus: 'CONNECTED', lastConnect: new Date().toISOString() }, access);
  }

  disconnect(id: string, access: Access): Promise<void> {
    return this.bookkeep(id, { connectionStatus: 'DISCONNECTED', lastDisconnect: new Date().toISOString() }, access);
  }

  uninstall(id: string, access: Access): Promise<void> {
    return this.bookkeep(id, { connectionStatus: 'UNINSTALLED' }, access);
  }

  setFimHoh(id: string, hoh: string, access: Access): Promise<void> {
    return this.bookkeep(id, { fimHoh: hoh }, access);
  }

  /**
   * Internal and external addresses; 409 for an UNINSTALLED or deleted endpoint. The store's
   * default refresh: both feed the `basic` free-text search, and addresses change rarely.
   */
  async setAddresses(id: string, internalIps: string[], externalIp: string, access: Access): Promise<void> {
    await this.conditionalPatch(id, access, () => ({ internalIps, lastIp: externalIp, lastSeen: new Date().toISOString() }), {
      read: (eid) => this.getActionable(eid, access),
    });
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

  /** Sets a UTM's connection status; the read decides its family and the caller's reach. */
  async setUtmConnectionStatus(id: string, status: ConnectionStatus, access: Access): Promise<void> {
    const now = new Date().toISOString();
    await this.conditionalPatch(
      id,
      access,
      () => ({
        connectionStatus: status,
        ...(status === 'CONNECTED' ? { lastConnect: now } : {}),
        ...(status === 'DISCONNECTED' ? { lastDisconnect: now } : {}),
      }),
      { refresh: false, read: (eid) => this.getFamilyHit(eid, 'utm', access) },
    );
  }

  /** Records a WAN interface report of the UTM with this serial and recomputes `wanStatus`. */
  async reportInterface(serial: string, name: WanStatus, status: InterfaceStatus, access: Access): Promise<EndpointRecord> {
    return readModifyWrite(async () => {
      const hit = await this.findHitByKey('utm-serial', serial, 'utm', access);
      const interfaces = { ...(hit.doc.interfaces ?? {}), [name]: status };
      const saved = await this.store.patch(
        hit.id,
        { interfaces, wanStatus: carrierWan(interfaces, hit.doc.wanStatus), updatedAt: new Date().toISOString(), updatedBy: access.userKey },
        { if_seq_no: hit.seqNo, if_primary_term: hit.primaryTerm },
      );
      return toEndpointRecord(saved);
    });
  }

  // ---- unique lookup keys --------------------------------------------------------------------

  /** Claims keys for an endpoint; returns those newly claimed. 409 (after undoing) when one is held. */
  private async claimKeys(endpointId: string, keys: string[]): Promise<string[]> {
    const claimed: string[] = [];
    try {
      for (const key of keys) if (await this.claimKey(endpointId, key)) claimed.push(key);
    } catch (err) {
      await this.releaseKeys(endpointId, claimed);
      throw err;
    }
    return claimed;
  }

  /** True when newly claimed, false when the endpoint already held it. */
  private async claimKey(endpointId: string, key: string): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.d.keys.create(key, endpointId)) return true;
      const held = await this.d.keys.get(key);
      if (!held) continue;
      if (held.doc.endpointId === endpointId) return false;
      if (!(await this.isStale(held.doc, key))) {
        throw new DuplicateKeyError(`${describeKey(key)} is already registered to another endpoint`);
      }
      if (await this.d.keys.takeOver(key, endpointId, held)) return true;
    }
    throw new DuplicateKeyError(`${describeKey(key)} is being registered concurrently; retry`);
  }

  /**
   * A held key is free when its holder is deleted, or when its claim is older than the grace
   * period and the holder is missing or no longer carries the value (a crash between the
   * key and the record write, or a release that failed).
   */
  private async isStale(held: { endpointId: string; claimedAt: string }, key: string): Promise<boolean> {
    const holder = await this.store.get(held.endpointId);
    if (holder?.doc.deleted) return true;
    if (Date.now() - Date.parse(held.claimedAt) < KEY_GRACE_MS) return false;
    return !holder || !endpointKeys(holder.doc).includes(key);
  }

  private async releaseKeys(endpointId: string, keys: string[]): Promise<void> {
    for (const key of keys) await this.d.keys.release(key, endpointId);
  }

  private async findHitByKey(
    kind: EndpointKeyKind,
    value: string,
    family: Family,
    access: Access,
    matches: (doc: EndpointDoc) => boolean = () => true,
  ): Promise<Stored<EndpointDoc>> {
    const key = lookupKey(kind, value);
    const notFound = new NotFoundError(`no ${FAMILY_NOUN[family]} with ${describeKey(key)}`);
    const held = await this.d.keys.get(key);
    if (!held) throw notFound;
    const hit = await this.store.get(held.doc.endpointId);
    if (!hit || hit.doc.deleted || !FAMILY_TYPES[family].includes(hit.doc.type) || !endpointKeys(hit.doc).includes(key) || !matches(hit.doc)) {
      throw notFound;
    }
    await access.assertEndpoint(hit.id, hit.doc.orgId);
    return hit;
  }

  /** The one UTM with a serial (unique), optionally also at a site. */
  async utmBySerial(serial: string, access: Access, siteId?: string): Promise<EndpointRecord> {
    return toEndpointRecord(
      await this.findHitByKey('utm-serial', serial, 'utm', access, (d) => siteId === undefined || d.siteId === siteId),
    );
  }

  async utmByMac(mac: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHitByKey('utm-mac', mac, 'utm', access));
  }

  async utmByCommonName(commonName: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHitByKey('utm-common-name', commonName, 'utm', access));
  }

  async lteByImeiAndSite(imei: string, siteId: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHitByKey('lte-imei-site', imeiSiteValue(imei, siteId), 'lte', access));
  }

  // ---- lists, searches, counts, aggregations ------------------------------------------------

  /**
   * Every visible record of a family matching `filters`, in id order: one search when they
   * fit in one batch (the usual case), else streamed with a point in time.
   */
  private async list(family: Family, filters: Query[], access: Access): Promise<EndpointRecord[]> {
    const query = familyQuery(family, await access.visibleOrgs(), filters);
    const first = await this.store.search(query, { from: 0, size: LIST_BATCH, sort: [{ id: 'asc' }], track_total_hits: true });
    if (first.total <= first.items.length) return first.items.map(hitToEndpointRecord);
    const out: EndpointRecord[] = [];
    for await (const batch of this.store.scan(query, LIST_BATCH)) out.push(...batch.map(hitToEndpointRecord));
    return out;
  }

  utmsAtSite(siteId: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('utm', [{ term: { siteId } }], access);
  }

  utmsInNetwork(network: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('utm', [{ term: { merakiNetworkId: network } }], access);
  }

  ltesAtSite(siteId: string, access: Access): Promise<EndpointRecord[]> {
    return this.list('lte', [{ term: { 'site.id': siteId } }], access);
  }

  /** Agents of the org's direct child organizations, or of every organization below it. */
  async agentsBelow(orgId: string, depth: 'children' | 'descendants', access: Access): Promise<EndpointRecord[]> {
    await access.assertOrg(orgId);
    const orgs = depth === 'children' ? await this.d.orgs.children(orgId) : await this.d.orgs.descendants(orgId);
    if (orgs.length === 0) return [];
    return this.list('agent', [{ terms: { orgId: orgs } }], access);
  }

  private async page(query: Query, pr: PageRequest, sort: Record<string, string>): Promise<Page<EndpointRecord>> {
    const res = await this.store.search(query, pageQuery(pr, sort));
    return toPage(pr, res.total, res.items.map(hitToEndpointRecord));
  }

  private async utmQuery(c: UtmCriteria, access: Access): Promise<Query> {
    return utmCriteriaQuery(c, await access.resolveOrgs(c.orgId, c.includeChildren ?? false), await this.store.presence?.view());
  }

  async searchUtm(c: UtmCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    return this.page(await this.utmQuery(c, access), pr, UTM_SORT);
  }

  async countUtm(c: UtmCriteria, access: Access): Promise<number> {
    return this.store.count(await this.utmQuery(c, access));
  }

  /** One bucket per model (all of them), by count descending then model. */
  async utmModelAggregation(c: UtmCriteria, access: Access): Promise<{ key: string; count: number }[]> {
    const buckets = await this.store.termsAll(await this.utmQuery(c, access), 'model');
    return buckets.sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async searchLte(c: LteEndpointCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    const query = lteCriteriaQuery(c, await access.resolveOrgs(c.orgId, c.includeChildren ?? false));
    return this.page(query, pr, LTE_SORT);
  }

  /** Sum of dataUsage over the LTE endpoints visible to the caller. */
  async lteDataUsageSum(access: Access): Promise<number> {
    return this.store.sum(familyQuery('lte', await access.visibleOrgs()), 'dataUsage');
  }

  async searchAgents(c: EndpointCriteria, pr: PageRequest, access: Access): Promise<Page<EndpointRecord>> {
    const query = endpointCriteriaQuery(c, await access.resolveOrgs(c.orgId, false), Date.now(), await this.store.presence?.view());
    return this.page(query, pr, ENDPOINT_SORT);
  }
}

