/**
 * Unique lookup keys of endpoints (serial, MAC, common name, IMEI + site): claimed in the
 * keys index before a record carries them, released after, and the lookups by key.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Stored } from '../../store/doc-store.js';
import type { EndpointKeyStore } from './keys-store.js';
import {
  endpointKeys,
  FAMILY_NOUN,
  FAMILY_TYPES,
  imeiSiteValue,
  lookupKey,
  type EndpointDoc,
  type EndpointKeyKind,
  type EndpointRecord,
  type Family,
} from './model.js';
import { toEndpointRecord, type EndpointStore } from './store.js';

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

function describeKey(key: string): string {
  const kind = key.slice(0, key.indexOf(':')) as EndpointKeyKind;
  let value = key.slice(key.indexOf(':') + 1);
  if (kind === 'lte-imei-site') value = (JSON.parse(value) as string[]).join(' at site ');
  return `${KEY_FIELD[kind] ?? 'key'} ${value}`;
}

export class UniqueKeys {
  constructor(
    private readonly store: EndpointStore,
    private readonly keys: EndpointKeyStore,
  ) {}

  /** Claims keys for an endpoint; returns those newly claimed. 409 (after undoing) when one is held. */
  async claim(endpointId: string, keys: string[]): Promise<string[]> {
    const claimed: string[] = [];
    try {
      for (const key of keys) if (await this.claimOne(endpointId, key)) claimed.push(key);
    } catch (err) {
      await this.release(endpointId, claimed);
      throw err;
    }
    return claimed;
  }

  /** Releases keys the endpoint holds (a key another endpoint holds is left alone). */
  async release(endpointId: string, keys: string[]): Promise<void> {
    for (const key of keys) await this.keys.release(key, endpointId);
  }

  /** True when newly claimed, false when the endpoint already held it. */
  private async claimOne(endpointId: string, key: string): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.keys.create(key, endpointId)) return true;
      const held = await this.keys.get(key);
      if (!held) continue;
      if (held.doc.endpointId === endpointId) return false;
      if (!(await this.isStale(held.doc, key))) {
        throw new DuplicateKeyError(`${describeKey(key)} is already registered to another endpoint`);
      }
      if (await this.keys.takeOver(key, endpointId, held)) return true;
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

  /** The visible endpoint of a family that holds a key (and passes `matches`): 404 otherwise. */
  async findHit(
    kind: EndpointKeyKind,
    value: string,
    family: Family,
    access: Access,
    matches: (doc: EndpointDoc) => boolean = () => true,
  ): Promise<Stored<EndpointDoc>> {
    const key = lookupKey(kind, value);
    const notFound = new NotFoundError(`no ${FAMILY_NOUN[family]} with ${describeKey(key)}`);
    const held = await this.keys.get(key);
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
    return toEndpointRecord(await this.findHit('utm-serial', serial, 'utm', access, (d) => siteId === undefined || d.siteId === siteId));
  }

  async utmByMac(mac: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHit('utm-mac', mac, 'utm', access));
  }

  async utmByCommonName(commonName: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHit('utm-common-name', commonName, 'utm', access));
  }

  async lteByImeiAndSite(imei: string, siteId: string, access: Access): Promise<EndpointRecord> {
    return toEndpointRecord(await this.findHit('lte-imei-site', imeiSiteValue(imei, siteId), 'lte', access));
  }
}
