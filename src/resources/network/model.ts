/** Spec 2.7: network heartbeats and discovered network hosts, and the pure host-merge rules. */
import crypto from 'node:crypto';

export const NETWORK_HOST_STATUSES = ['NONE', 'KNOWN', 'UNKNOWN'] as const;
export type NetworkHostStatus = (typeof NETWORK_HOST_STATUSES)[number];

export interface NetworkHeartbeat {
  endpointId: string;
  orgId: string;
  externalAddress?: string;
  networkAddress?: string;
  hostAddress: string;
  subnetMask?: string;
  defaultGateway?: string;
  operatingSystem?: string;
  pcapVersion?: string;
  timestamp: string;
}

export interface NetworkHeartbeatDoc extends NetworkHeartbeat {
  id: string;
}

/** NetworkHost as stored and as the API shows it. */
export interface NetworkHost {
  id: string;
  orgId: string;
  ipAddress: string;
  macAddress?: string;
  macVendor?: string;
  lastSeen: string;
  status: NetworkHostStatus;
}

/** One observation of a host: from a heartbeat (no MAC) or a discovery report. */
export interface HostSighting {
  orgId: string;
  ipAddress: string;
  macAddress?: string;
  macVendor?: string;
  lastSeen: string;
}

export interface NetworkHostSearchCriteria {
  orgId?: string;
  ipAddress?: string;
  macAddress?: string;
  status?: NetworkHostStatus;
}

/** Parses `AA-BB-CC-DD-EE-FF`, `aa:bb:…` or `aabb.ccdd.eeff` → `aa:bb:cc:dd:ee:ff`; undefined when not a MAC. */
export function parseMac(input: string | undefined): string | undefined {
  if (!input) return undefined;
  const hex = input.trim().toLowerCase().replace(/[:.-]/g, '');
  if (!/^[0-9a-f]{12}$/.test(hex)) return undefined;
  return hex.match(/../g)?.join(':');
}

/**
 * The deterministic id of a host: its org and MAC address, or its IP address when the MAC
 * is unknown; hashed so any org id and IPv6 address give a short, URL-safe id.
 */
export function networkHostId(orgId: string, macAddress: string | undefined, ipAddress: string): string {
  const key = macAddress ? `mac\u0000${macAddress}` : `ip\u0000${ipAddress.toLowerCase()}`;
  return crypto.createHash('sha256').update(`${orgId}\u0000${key}`).digest('hex').slice(0, 32);
}

export function sightingId(s: HostSighting): string {
  return networkHostId(s.orgId, s.macAddress, s.ipAddress);
}

/**
 * Applies a sighting to the stored host. A new host starts NONE; a known host keeps its
 * status; lastSeen (and the address fields that come with it) moves forward only; a missing
 * macVendor is filled in from any sighting. `changed` is false when nothing would change.
 */
export function mergeSighting(existing: NetworkHost | undefined, s: HostSighting, id: string): { host: NetworkHost; changed: boolean } {
  if (!existing) {
    const host: NetworkHost = { id, orgId: s.orgId, ipAddress: s.ipAddress, lastSeen: s.lastSeen, status: 'NONE' };
    if (s.macAddress) host.macAddress = s.macAddress;
    if (s.macVendor) host.macVendor = s.macVendor;
    return { host, changed: true };
  }
  const host: NetworkHost = { ...existing };
  let changed = false;
  if (Date.parse(s.lastSeen) > Date.parse(existing.lastSeen)) {
    host.lastSeen = s.lastSeen;
    host.ipAddress = s.ipAddress;
    if (s.macAddress) host.macAddress = s.macAddress;
    if (s.macVendor) host.macVendor = s.macVendor;
    changed = true;
  }
  if (!host.macVendor && s.macVendor) {
    host.macVendor = s.macVendor;
    changed = true;
  }
  return { host, changed };
}

/** Folds sightings of the same host within one batch into one (latest wins, vendor filled). */
export function foldSightings(sightings: readonly HostSighting[]): Map<string, HostSighting> {
  const out = new Map<string, HostSighting>();
  for (const s of sightings) {
    const id = sightingId(s);
    const prev = out.get(id);
    if (!prev) {
      out.set(id, s);
      continue;
    }
    const [older, newer] = Date.parse(s.lastSeen) > Date.parse(prev.lastSeen) ? [prev, s] : [s, prev];
    out.set(id, { ...newer, ...(newer.macVendor || !older.macVendor ? {} : { macVendor: older.macVendor }) });
  }
  return out;
}
