/** The Endpoint family of spec 2.2: records as the API shows them and the stored document. */
import type { UserKey } from '../../domain.js';
import type { Query } from '../../store/doc-store.js';

export const ENDPOINT_TYPES = ['VC_ENDPOINT', 'VC_UTM', 'EXTERNAL_UTM', 'VC_LTE'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];
export const UTM_TYPES: readonly EndpointType[] = ['EXTERNAL_UTM', 'VC_UTM'];
export const LTE_TYPES: readonly EndpointType[] = ['VC_LTE'];
export const AGENT_TYPES: readonly EndpointType[] = ['VC_ENDPOINT'];

export const CONNECTION_STATUSES = ['CONNECTED', 'POTENTIALLY_DISCONNECTED', 'DISCONNECTED', 'NEVER', 'UNINSTALLED'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
export const EXTERNAL_STATUSES = ['PROVISIONING', 'ACTIVE', 'INACTIVE', 'MIGRATED_TO_SQL'] as const;
export type ExternalStatus = (typeof EXTERNAL_STATUSES)[number];
export const WAN_STATUSES = ['WAN1', 'WAN2'] as const;
export type WanStatus = (typeof WAN_STATUSES)[number];
export const INTERFACE_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type InterfaceStatus = (typeof INTERFACE_STATUSES)[number];

export interface Host {
  hostName?: string;
  uptime?: number;
  bootTime?: number;
  procs?: number;
  os?: string;
  platform?: string;
  platformFamily?: string;
  platformVersion?: string;
  kernelVersion?: string;
  kernelArch?: string;
  virtualizationSystem?: string;
  virtualizationRole?: string;
  hostid?: string;
}

export interface Address {
  addressLine1?: string;
  addressLine2?: string;
  city?: string;
  province?: string;
  postalCode?: string;
  country?: string;
  notes?: string;
  tags?: { name?: string; prefix?: string; value?: string }[];
}

export interface Site {
  id?: string;
  orgName?: string;
  address?: Address;
  displayName?: string;
}

/** Fields every family shares (spec 2.2 Endpoint), without the server-owned ones. */
export interface EndpointFields {
  orgId: string;
  type: EndpointType;
  clientVersion?: string;
  certSubject?: string;
  displayName?: string;
  hostInfo?: Host;
  lastConnect?: string;
  lastDisconnect?: string;
  certExpiry?: string;
  lastIp?: string;
  fimHoh?: string;
  panHoh?: string;
  latestConfig?: boolean;
  internalIps?: string[];
  connectionStatus?: ConnectionStatus;
  externalStatus?: string;
  deleted?: boolean;
}

export interface UtmFields {
  serialId?: string;
  siteId?: string;
  lastMacAddress?: string;
  lastEventUpdateTs?: string;
  lastSecurityEventUpdateTs?: string;
  merakiNetworkId?: string;
  model?: string;
  commonName?: string;
  manufacturer?: string;
  latitude?: number;
  longitude?: number;
  site?: Site;
  wanStatus?: WanStatus;
}

export interface LteFields {
  dataUsage?: number;
  dataAllowance?: number;
  iccid?: string;
  imei?: string;
  model?: string;
  mtn?: string;
  telco?: string;
  poolOrgId?: string;
  site?: Site;
}

/** The stored document: one index holds every family, `type` discriminates. */
export interface EndpointDoc extends EndpointFields, UtmFields, LteFields {
  id: string;
  createdAt: string;
  updatedAt: string;
  createdBy: UserKey;
  updatedBy: UserKey;
  /** Extension: the last sign of life; written only by the server (presence.ts). */
  lastSeen?: string;
  /** Internal: the last reported status of each WAN interface (UTM). */
  interfaces?: Partial<Record<WanStatus, InterfaceStatus>>;
  /** Internal: true for network-scanner endpoints (docs/adr/0038-endpoint-search-criteria.md). */
  scanner?: boolean;
}

/** A record as the API returns it: the document plus its integer version. */
export type EndpointRecord = Omit<EndpointDoc, 'interfaces' | 'scanner'> & { version: number };

export function isUtm(t: EndpointType): boolean {
  return UTM_TYPES.includes(t);
}
export function isLte(t: EndpointType): boolean {
  return LTE_TYPES.includes(t);
}

/** The three record shapes of spec 2.2, by discriminator. */
export type Family = 'agent' | 'utm' | 'lte';
export const FAMILY_TYPES: Record<Family, readonly EndpointType[]> = { agent: AGENT_TYPES, utm: UTM_TYPES, lte: LTE_TYPES };
export const FAMILY_DEFAULT_TYPE: Record<Family, EndpointType> = { agent: 'VC_ENDPOINT', utm: 'EXTERNAL_UTM', lte: 'VC_LTE' };
export const FAMILY_NOUN: Record<Family, string> = { agent: 'endpoint', utm: 'UTM endpoint', lte: 'LTE endpoint' };

export function familyOf(t: EndpointType): Family {
  return isUtm(t) ? 'utm' : isLte(t) ? 'lte' : 'agent';
}

/**
 * Fields only the server writes; a JSON Patch touching them is refused (405) and a body
 * carrying them has them ignored. `deleted` changes only through DELETE.
 */
export const SERVER_OWNED_FIELDS = ['id', 'type', 'version', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy', 'deleted', 'lastSeen'] as const;

/** Kinds of single-record lookup keys that must be unique (docs/adr/0035-unique-keys-by-create-only-documents.md). */
export type EndpointKeyKind = 'utm-serial' | 'utm-mac' | 'utm-common-name' | 'lte-imei-site';

/**
 * The comparison form of a MAC in a unique lookup key: its hex digits, lower case (aa:bb… =
 * AA-BB… = aabb…); never fails (a value without hex digits is kept, trimmed). The network
 * resource's `parseMac` is the strict parser.
 */
export function macKeyDigits(mac: string): string {
  const hex = mac.replace(/[^0-9a-f]/gi, '').toLowerCase();
  return hex === '' ? mac.trim().toLowerCase() : hex;
}

/** The lookup key of one kind for a value (what `endpointKeys` yields for a record carrying it). */
export function lookupKey(kind: EndpointKeyKind, value: string): string {
  switch (kind) {
    case 'utm-mac':
      return `${kind}:${macKeyDigits(value)}`;
    case 'utm-common-name':
      return `${kind}:${value.trim().toLowerCase()}`;
    default:
      return `${kind}:${value}`;
  }
}

/** IMEI + site as one unambiguous key value (JSON, so a '|' inside either cannot collide). */
export function imeiSiteValue(imei: string, siteId: string): string {
  return JSON.stringify([imei, siteId]);
}

/** The unique lookup keys a live record holds (none once deleted). */
export function endpointKeys(doc: Pick<EndpointDoc, 'type' | 'deleted' | 'serialId' | 'lastMacAddress' | 'commonName' | 'imei' | 'site'>): string[] {
  if (doc.deleted) return [];
  const out: string[] = [];
  if (isUtm(doc.type)) {
    if (doc.serialId) out.push(lookupKey('utm-serial', doc.serialId));
    if (doc.lastMacAddress) out.push(lookupKey('utm-mac', doc.lastMacAddress));
    if (doc.commonName) out.push(lookupKey('utm-common-name', doc.commonName));
  } else if (isLte(doc.type)) {
    if (doc.imei && doc.site?.id) out.push(lookupKey('lte-imei-site', imeiSiteValue(doc.imei, doc.site.id)));
  }
  return out;
}

/**
 * A scanner endpoint is an agent whose certificate subject names the scanner unit
 * (`OU=scanner`, case-insensitive): scanner appliances are issued certificates under their
 * own organizational unit (docs/adr/0038-endpoint-search-criteria.md).
 */
export function isScannerSubject(certSubject: string | undefined): boolean {
  if (!certSubject) return false;
  return certSubject.split(/[,/]/).some((part) => /^\s*OU\s*=\s*scanner\s*$/i.test(part));
}

/**
 * The WAN that carries traffic after an interface report. WAN1 is the primary: it carries
 * traffic unless it was reported INACTIVE; then WAN2 does unless it too was reported
 * INACTIVE; with both down the current value stays (there is nothing to fail over to).
 * An interface never reported counts as up.
 */
export function carrierWan(interfaces: Partial<Record<WanStatus, InterfaceStatus>>, current: WanStatus | undefined): WanStatus {
  if (interfaces.WAN1 !== 'INACTIVE') return 'WAN1';
  if (interfaces.WAN2 !== 'INACTIVE') return 'WAN2';
  return current ?? 'WAN1';
}

/** What a query needs to decide presence (presence.ts): the time and the stale-CONNECTED filter. */
export interface PresenceView {
  nowMs: number;
  /** Matches stored-CONNECTED endpoints whose lastSeen is older than their org's timeout. */
  stale: Query;
}
