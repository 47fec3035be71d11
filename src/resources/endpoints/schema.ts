/** joi schemas of the Endpoint family (spec 2.2): request bodies, records, criteria, pages. */
import net from 'node:net';
import Joi from 'joi';
import { pagedCriteriaSchema, pageSchema } from '../../http/paging.js';
import { checked } from '../../validation.js';
import { id as baseId, isoDate as baseIsoDate, isoDateOut, orgId, serverOwned, serverOwnedField } from '../../http/schemas.js';
import {
  CONNECTION_STATUSES,
  ENDPOINT_TYPES,
  EXTERNAL_STATUSES,
  FAMILY_TYPES,
  WAN_STATUSES,
  type Family,
} from './model.js';

/** Record ids: also within Elasticsearch's 512-byte document id limit. */
export const id = checked(baseId, 'at most 512 bytes in UTF-8', (v: string) => Buffer.byteLength(v, 'utf8') <= 512, 'must be at most 512 bytes');
/** Dates within years 1..9999 (what the date mapping parses). */
const isoDate = baseIsoDate.min('0001-01-01T00:00:00Z').max('9999-12-31T23:59:59.999Z').meta({ className: 'IsoDateTime' });
const text = Joi.string().max(1024).allow('');
/** Values that serve as unique lookup keys: never empty. */
const keyText = Joi.string().trim().min(1).max(256);
const ipAddress = Joi.string().trim().ip({ version: ['ipv4', 'ipv6'], cidr: 'forbidden' }).meta({ className: 'IpAddress' });
const int = Joi.number().integer();

export const hostSchema = Joi.object({
  hostName: text,
  uptime: int.min(0),
  bootTime: int.min(0),
  procs: int.min(0),
  os: text,
  platform: text,
  platformFamily: text,
  platformVersion: text,
  kernelVersion: text,
  kernelArch: text,
  virtualizationSystem: text,
  virtualizationRole: text,
  hostid: text,
})
  .label('Host')
  .meta({ className: 'Host' });

export const addressSchema = Joi.object({
  addressLine1: text,
  addressLine2: text,
  city: text,
  province: text,
  postalCode: text,
  country: text,
  notes: Joi.string().max(4096).allow(''),
  tags: Joi.array()
    .max(100)
    .items(Joi.object({ name: text, prefix: text, value: text }).meta({ className: 'AddressTag' })),
})
  .label('Address')
  .meta({ className: 'Address' });

export const siteSchema = Joi.object({
  id: keyText,
  orgName: text,
  address: addressSchema,
  displayName: text,
})
  .label('Site')
  .meta({ className: 'Site' });

const connectionStatus = Joi.string().valid(...CONNECTION_STATUSES);
const externalStatus = Joi.string().valid(...EXTERNAL_STATUSES);
const wanStatus = Joi.string().valid(...WAN_STATUSES);

/** Client-writable fields every family shares. */
const commonIn = {
  id: id,
  /** The integer version read last: makes a replace conditional (409 when stale). */
  version: int.min(1),
  ...serverOwned,
  deleted: serverOwnedField(Joi.boolean()),
  lastSeen: serverOwnedField(isoDateOut).description(
    'Extension: the last sign of life recorded for the endpoint; a CONNECTED endpoint not seen for its presence timeout reads as POTENTIALLY_DISCONNECTED',
  ).meta({ 'x-extension': true }),
  orgId: orgId,
  clientVersion: text,
  certSubject: text,
  displayName: text,
  hostInfo: hostSchema,
  lastConnect: isoDate,
  lastDisconnect: isoDate,
  certExpiry: isoDate,
  lastIp: ipAddress,
  fimHoh: text,
  panHoh: text,
  latestConfig: Joi.boolean(),
  internalIps: Joi.array().max(256).items(ipAddress),
  connectionStatus,
  externalStatus,
};

const utmIn = {
  serialId: keyText,
  siteId: keyText,
  lastMacAddress: keyText,
  lastEventUpdateTs: isoDate,
  lastSecurityEventUpdateTs: isoDate,
  merakiNetworkId: text.description('the firewall network id'),
  model: text,
  commonName: keyText,
  manufacturer: text,
  latitude: Joi.number().min(-90).max(90),
  longitude: Joi.number().min(-180).max(180),
  site: siteSchema,
  wanStatus,
};

const lteIn = {
  dataUsage: Joi.number().min(0),
  dataAllowance: int.min(0),
  iccid: text,
  imei: keyText,
  model: text,
  mtn: text,
  telco: text,
  poolOrgId: text,
  site: siteSchema,
};

/**
 * Request body of POST/PUT /endpoint: polymorphic on `type` (spec 2.2 discriminator), so
 * each family's fields are validated by its own schema; no type means VC_ENDPOINT.
 */
export function polymorphicEndpointBody(): Joi.AlternativesSchema {
  const typed = (types: readonly string[]): Joi.ObjectSchema =>
    Joi.object({ type: Joi.string().valid(...types).required() }).unknown(true);
  return Joi.alternatives()
    .conditional(typed(FAMILY_TYPES.utm), {
      then: endpointBody('utm'),
      otherwise: Joi.alternatives().conditional(typed(FAMILY_TYPES.lte), {
        then: endpointBody('lte'),
        otherwise: endpointBody('agent'),
      }),
    })
    .label('EndpointPolymorphicInput')
    .meta({ className: 'Endpoint', discriminator: 'type' });
}

/**
 * One family's record as a client writes it (create or replace; `type` limited to the family's
 * values) and as the service answers it: one named schema per family in the OpenAPI document,
 * its server-owned fields read-only, so a record read can be sent back as it is.
 */
export function endpointBody(family: Family): Joi.ObjectSchema {
  const type = Joi.string().valid(...FAMILY_TYPES[family]);
  switch (family) {
    case 'utm':
      return Joi.object({ ...commonIn, type, ...utmIn }).label('UtmEndpoint').meta({ className: 'UtmEndpoint' }).example({"id": "fw-0042", "version": 3, "orgId": "msp-1", "createdAt": "2026-11-20T09:12:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z", "createdBy": {"username": "soc-admin", "authenticator": "token"}, "updatedBy": {"username": "soc-admin", "authenticator": "token"}, "deleted": false, "type": "EXTERNAL_UTM", "displayName": "main-office-fw", "serialId": "Q2XX-ABCD-1234", "siteId": "site-12", "lastMacAddress": "00:18:0a:12:34:56", "model": "MX68", "manufacturer": "Example Networks", "commonName": "fw-0042.example.net", "wanStatus": "WAN1", "connectionStatus": "CONNECTED", "site": {"id": "site-12", "orgName": "Example Dental", "displayName": "Main office", "address": {"city": "Lyon", "country": "FR", "tags": [{"name": "floor", "prefix": "f", "value": "2"}]}}});
    case 'lte':
      return Joi.object({ ...commonIn, type, ...lteIn }).label('LteEndpoint').meta({ className: 'LteEndpoint' }).example({"id": "lte-0007", "version": 3, "orgId": "msp-1", "createdAt": "2026-11-20T09:12:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z", "createdBy": {"username": "soc-admin", "authenticator": "token"}, "updatedBy": {"username": "soc-admin", "authenticator": "token"}, "deleted": false, "type": "VC_LTE", "displayName": "kiosk-router", "imei": "356938035643809", "iccid": "8944500102198304826", "telco": "Example Mobile", "dataUsage": 1.75, "dataAllowance": 10737418240, "site": {"id": "site-12", "orgName": "Example Dental", "displayName": "Main office", "address": {"city": "Lyon", "country": "FR", "tags": [{"name": "floor", "prefix": "f", "value": "2"}]}}});
    default:
      return Joi.object({ ...commonIn, type }).label('Endpoint').meta({ className: 'AgentEndpoint' }).example({"id": "ep-7f3a9c", "version": 3, "orgId": "msp-1", "createdAt": "2026-11-20T09:12:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z", "createdBy": {"username": "soc-admin", "authenticator": "token"}, "updatedBy": {"username": "soc-admin", "authenticator": "token"}, "deleted": false, "type": "VC_ENDPOINT", "displayName": "reception-pc", "clientVersion": "v3.10.2", "hostInfo": {"hostName": "reception-pc", "os": "windows", "platform": "Microsoft Windows 11 Pro", "kernelArch": "x86_64", "uptime": 86400}, "lastIp": "203.0.113.7", "internalIps": ["10.0.0.12"], "connectionStatus": "CONNECTED", "lastConnect": "2026-11-26T08:00:00.000Z", "lastSeen": "2026-11-26T08:00:00.000Z", "latestConfig": true});
  }
}

/**
 * The records the service answers are described by the same schemas as the bodies it takes
 * (server-owned fields read-only): a record read can be sent back without conversion.
 */
export const endpointRecord = endpointBody('agent');
export const utmEndpointRecord = endpointBody('utm');
export const lteEndpointRecord = endpointBody('lte');

/** Any record of the family, in its own shape (discriminated by `type`). */
export const anyEndpointRecord = Joi.alternatives()
  .try(endpointRecord, utmEndpointRecord, lteEndpointRecord)
  .label('EndpointPolymorphic')
  .meta({ className: 'Endpoint', discriminator: 'type' })
  .description(`one of AgentEndpoint, UtmEndpoint, LteEndpoint by type (${ENDPOINT_TYPES.join(', ')})`);

export const UTM_CRITERIA = Joi.object({
  connectionStatuses: Joi.array().max(10).items(connectionStatus),
  externalStatuses: Joi.array().max(10).items(externalStatus),
  siteId: keyText,
  orgId: orgId,
  siteOrgName: keyText,
  siteKey: keyText.description('matches site.id'),
  includeChildren: Joi.boolean().default(false),
  wanStatuses: Joi.array().max(2).items(wanStatus),
})
  .label('UtmCriteria')
  .meta({ className: 'UtmCriteria' });

export const LTE_CRITERIA = Joi.object({
  orgId: orgId,
  dataUsageGreaterThen: Joi.number(),
  includeChildren: Joi.boolean().default(false),
})
  .label('LteEndpointCriteria')
  .meta({ className: 'LteEndpointCriteria' });

export const ENDPOINT_CRITERIA = Joi.object({
  basic: Joi.string().trim().max(256).allow(''),
  connectionStatuses: Joi.array().max(10).items(connectionStatus).description('Extension: matches the connection status with presence applied, as in UtmCriteria').meta({ 'x-extension': true }),
  orgId: orgId,
  includeScannerEndpoints: Joi.boolean(),
  showInactiveEndpoints: Joi.boolean(),
  hideInactiveAfterDays: int.min(0).max(36_500),
})
  .label('EndpointCriteria')
  .meta({ className: 'EndpointCriteria' });

/** API field → indexed field a page may be sorted by. */
const COMMON_SORT: Record<string, string> = {
  id: 'id',
  orgId: 'orgId',
  type: 'type',
  displayName: 'displayName.lc',
  clientVersion: 'clientVersion',
  connectionStatus: 'connectionStatus',
  externalStatus: 'externalStatus',
  lastConnect: 'lastConnect',
  lastDisconnect: 'lastDisconnect',
  lastIp: 'lastIp',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
};
export const ENDPOINT_SORT: Record<string, string> = { ...COMMON_SORT, 'hostInfo.hostName': 'hostInfo.hostName', certExpiry: 'certExpiry' };
export const UTM_SORT: Record<string, string> = {
  ...COMMON_SORT,
  serialId: 'serialId',
  siteId: 'siteId',
  model: 'model',
  commonName: 'commonName',
  manufacturer: 'manufacturer',
  wanStatus: 'wanStatus',
  lastMacAddress: 'lastMacAddress',
};
export const LTE_SORT: Record<string, string> = {
  ...COMMON_SORT,
  imei: 'imei',
  iccid: 'iccid',
  model: 'model',
  telco: 'telco',
  dataUsage: 'dataUsage',
  dataAllowance: 'dataAllowance',
};

export const pagedUtmCriteria = pagedCriteriaSchema(UTM_CRITERIA, Object.keys(UTM_SORT), 'PagedUtmEndpointCriteria');
export const pagedLteCriteria = pagedCriteriaSchema(LTE_CRITERIA, Object.keys(LTE_SORT), 'PageLteEndpointCriteria');
export const pagedEndpointCriteria = pagedCriteriaSchema(ENDPOINT_CRITERIA, Object.keys(ENDPOINT_SORT), 'PagedEndpointCriteria');

export const pageUtmEndpoint = pageSchema(utmEndpointRecord, 'UtmEndpointPage');
export const pageLteEndpoint = pageSchema(lteEndpointRecord, 'LteEndpointPage');
export const pageEndpoint = pageSchema(endpointRecord, 'AgentEndpointPage');

/** An RFC 6901 pointer: empty (the whole record) or starting with a slash. */
const jsonPointer = Joi.string().allow('').max(1024).pattern(/^\//, 'JSON pointer');

/** The spec's JsonPatchOperation is upper case, RFC 6902's lower case: both are taken (and the document says so). */
const patchOp = (...ops: string[]): Joi.StringSchema =>
  Joi.string()
    .lowercase()
    .valid(...ops, ...ops.map((o) => o.toUpperCase()))
    .required();

/** One RFC 6902 operation: move and copy need `from`; add, replace and test need `value` (so the document says so too). */
const jsonPatchOperation = Joi.alternatives()
  .try(
    Joi.object({ op: patchOp('add', 'replace', 'test'), path: jsonPointer.required(), from: jsonPointer, value: Joi.any().required() }).meta({
      className: 'JsonPatchValueOperation',
    }),
    Joi.object({ op: patchOp('remove'), path: jsonPointer.required(), from: jsonPointer, value: Joi.any() }).meta({
      className: 'JsonPatchRemoveOperation',
    }),
    Joi.object({ op: patchOp('move', 'copy'), path: jsonPointer.required(), from: jsonPointer.required(), value: Joi.any() }).meta({
      className: 'JsonPatchFromOperation',
    }),
  )
  .label('JsonPatch')
  .meta({ className: 'JsonPatch', discriminator: 'op' });

/**
 * RFC 6902 operations (spec 2.7 JsonPatch), as an array, or one operation alone (the spec's
 * JsonNode body `{op, path, value}`), which is applied as a one-operation patch. The
 * operation name is accepted in either case.
 */
export const jsonPatchBody = Joi.alternatives()
  .try(
    Joi.array().max(1000).items(jsonPatchOperation).label('JsonPatchDocument'),
    jsonPatchOperation.label('JsonNode').custom((op: unknown) => [op], 'one operation → a patch of one'),
  )
  .required()
  .description('RFC 6902 JSON Patch: an array of operations; one operation alone (the JsonNode form) is accepted too')
  .meta({ 'x-documented-as': 0 });

/** A comma-separated list of IP addresses in a path segment → array (400 on any bad one). */
export const ipListParam = Joi.string()
  .max(4096)
  .custom((value: string, helpers) => {
    const ips = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (ips.length === 0) return helpers.error('any.invalid');
    // The bad value goes in the error context: a message built from it would be parsed as a joi template.
    for (const ip of ips) if (net.isIP(ip) === 0) return helpers.error('ipList.ip', { ip });
    return ips;
  }, 'comma-separated IP addresses')
  .messages({ 'ipList.ip': '"{{#ip}}" is not an IP address' })
  .meta({ openapi: { type: 'array', items: { type: 'string', anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } } });

export const ipParam = ipAddress;

/** Path parameters naming one endpoint. */
export const endpointIdParams = Joi.object({ id: id.required() });
