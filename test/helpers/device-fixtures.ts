/** Complete endpoint documents for seeding the endpoints index through its store (one bulk call). */
import type { estypes } from '@elastic/elasticsearch';
import type { EndpointDoc, EndpointType } from '../../src/resources/endpoints/model.js';

const by = { username: 'seed', authenticator: 'test' };

/** Text that exercises COPY escaping: tab, newline, CR, backslash, quotes, braces, non-ASCII. */
export const AWKWARD_TEXT = 'Front\tdesk\nrack "B" \\ {1,2} \r café ✓';

/** One complete document of `type` number `i`; every family field is set. */
export function deviceDoc(type: EndpointType, i: number, orgId: string, idPrefix: string): EndpointDoc {
  const ts = new Date(Date.UTC(2025, 0, 1, 0, 0, i % 60, i % 1000)).toISOString();
  const site = {
    id: `site-${i % 40}`,
    orgName: `Org ${orgId}`,
    displayName: i % 97 === 0 ? AWKWARD_TEXT : `Site ${i % 40}`,
    address: {
      addressLine1: `${i} Main Street`,
      city: 'Springfield',
      province: 'ON',
      postalCode: 'K1A 0B1',
      country: 'CA',
      notes: i % 97 === 0 ? AWKWARD_TEXT : 'ground floor',
      tags: [{ name: 'zone', prefix: 'z', value: String(i % 5) }],
    },
  };
  const common: EndpointDoc = {
    id: `${idPrefix}-${type.toLowerCase()}-${String(i).padStart(5, '0')}`,
    orgId,
    type,
    createdAt: ts,
    updatedAt: ts,
    createdBy: by,
    updatedBy: by,
    clientVersion: 'v3.9.0',
    certSubject: `CN=device-${i}`,
    displayName: i % 97 === 0 ? AWKWARD_TEXT : `Device ${i}`,
    hostInfo: { hostName: `host-${i}`, uptime: 1000 + i, bootTime: 1_700_000_000 + i, procs: 42, os: 'linux', platform: 'debian', hostid: `h${i}` },
    lastConnect: ts,
    lastDisconnect: ts,
    certExpiry: '2030-01-01T00:00:00.000Z',
    lastIp: `192.0.2.${i % 250}`,
    fimHoh: 'fim',
    panHoh: 'pan',
    latestConfig: i % 2 === 0,
    internalIps: i % 97 === 0 ? ['10.0.0.1', 'odd "ip" \\ {x}'] : [`10.0.${i % 250}.1`],
    connectionStatus: 'CONNECTED',
    externalStatus: i % 3 === 0 ? 'PROVISIONING' : 'ACTIVE',
    deleted: false,
  };
  if (type === 'VC_LTE') {
    return {
      ...common,
      dataUsage: 1.5 * i,
      dataAllowance: 10_000_000_000 + i,
      iccid: `8901${i}`,
      imei: `35${String(i).padStart(13, '0')}`,
      model: 'LTE-X',
      mtn: `555${i}`,
      telco: 'telco',
      poolOrgId: orgId,
      site,
    };
  }
  if (type === 'VC_ENDPOINT') return common;
  return {
    ...common,
    serialId: `SN-${idPrefix}-${i}`,
    siteId: site.id,
    lastMacAddress: `00:11:22:33:${String(i % 100).padStart(2, '0')}:aa`,
    lastEventUpdateTs: ts,
    lastSecurityEventUpdateTs: ts,
    merakiNetworkId: `N_${i}`,
    model: i % 2 ? 'MX64' : 'MX84',
    commonName: `fw-${i}.example`,
    manufacturer: 'vendor',
    latitude: 45.5 + i / 10_000,
    longitude: -73.5 - i / 10_000,
    wanStatus: 'WAN1',
    interfaces: { WAN1: 'ACTIVE', WAN2: 'INACTIVE' },
    site,
  };
}

/** Bulk operations indexing the documents. */
export function indexOps(docs: EndpointDoc[]): estypes.BulkRequest['operations'] {
  return docs.flatMap((d) => [{ index: { _id: d.id } }, d]);
}
