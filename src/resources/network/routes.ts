/** Spec 4.9: network heartbeats and network hosts (plus a bulk discovery ingest and reads). */
import net from 'node:net';
import Joi from 'joi';
import { READERS, WRITERS } from '../../access/principal.js';
import { routeDefaults, created, ok, type RouteSpec } from '../../http/routes.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageSchema, pagedCriteriaSchema } from '../../http/paging.js';
import type { PageRequest } from '../../domain.js';
import { id, isoDateOut, orgId } from '../../http/schemas.js';
import { HOST_SORT_FIELDS, MAX_DISCOVERED_HOSTS, type DiscoveredHostsResult, type NetworkService } from './service.js';
import {
  NETWORK_HOST_STATUSES,
  parseMac,
  type HostSighting,
  type NetworkHeartbeat,
  type NetworkHostSearchCriteria,
  type NetworkHostStatus,
} from './model.js';

/**
 * An ISO 8601 date-time between 1970 and 9999 (what an Elasticsearch date holds in this
 * form), normalised to UTC milliseconds (`2024-05-01T10:00:00.000Z`).
 */
const instant = Joi.date()
  .iso()
  .min('1970-01-01T00:00:00.000Z')
  .max('9999-12-31T23:59:59.999Z')
  .custom((v: Date) => v.toISOString())
  .meta({ className: 'IsoDateTime' });
const addressText = Joi.string().trim().max(256).allow('');

/**
 * joi's ip() admits forms an Elasticsearch `ip` field refuses (leading zeros such as
 * 010.0.0.1, IPv6 zone ids); node's parser is as strict as Elasticsearch's.
 */
function strictIp(value: string, withPrefix: boolean): boolean {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || address.includes('%')) return false;
  const family = net.isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!withPrefix || !/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
const ipAddress = Joi.string()
  .max(64)
  .ip({ version: ['ipv4', 'ipv6'], cidr: 'forbidden' })
  .custom((v: string, helpers) => (strictIp(v, false) ? v : helpers.error('ip.strict')))
  .messages({ 'ip.strict': '{{#label}} must be an IPv4 or IPv6 address (no leading zeros, no zone id)' })
  .meta({ className: 'HostAddress' });
const ipOrCidr = Joi.string()
  .max(64)
  .ip({ version: ['ipv4', 'ipv6'], cidr: 'optional' })
  .custom((v: string, helpers) => (strictIp(v, true) ? v : helpers.error('ip.strict')))
  .messages({ 'ip.strict': '{{#label}} must be an IPv4 or IPv6 address or CIDR block (no leading zeros, no zone id)' });
const macAddress = Joi.string()
  // The document's form of what parseMac accepts: twelve hex digits, any of : . - between them.
  .pattern(/^\s*[:.-]*(?:[0-9A-Fa-f][:.-]*){12}\s*$/, 'MAC address')
  .custom((v: string, helpers) => parseMac(v) ?? helpers.error('any.invalid'))
  .messages({
    'any.invalid': '{{#label}} must be a MAC address (six hex octets)',
    'string.pattern.name': '{{#label}} must be a MAC address (six hex octets)',
  });
const statusValue = Joi.string().valid(...NETWORK_HOST_STATUSES);

const heartbeatIn = Joi.object({
  endpointId: id.required(),
  orgId: orgId.required(),
  externalAddress: addressText,
  networkAddress: addressText,
  hostAddress: ipAddress.required(),
  subnetMask: addressText,
  defaultGateway: addressText,
  operatingSystem: addressText,
  pcapVersion: addressText,
  timestamp: instant.description('defaults to the time of receipt'),
})
  .required()
  .label('NetworkHeartbeat').meta({ className: 'NetworkHeartbeatInput' }).example({"endpointId": "ep-7f3a9c", "orgId": "msp-1", "externalAddress": "203.0.113.7", "networkAddress": "10.0.0.0", "hostAddress": "10.0.0.12", "subnetMask": "255.255.255.0", "defaultGateway": "10.0.0.1", "operatingSystem": "windows", "pcapVersion": "1.10.4"});

const heartbeatOut = Joi.object({
  endpointId: Joi.string().required(),
  orgId: Joi.string().required(),
  externalAddress: Joi.string().allow(''),
  networkAddress: Joi.string().allow(''),
  hostAddress: Joi.string().required(),
  subnetMask: Joi.string().allow(''),
  defaultGateway: Joi.string().allow(''),
  operatingSystem: Joi.string().allow(''),
  pcapVersion: Joi.string().allow(''),
  timestamp: isoDateOut.required(),
}).label('NetworkHeartbeat').meta({ className: 'NetworkHeartbeat' }).example({"endpointId": "ep-7f3a9c", "orgId": "msp-1", "externalAddress": "203.0.113.7", "networkAddress": "10.0.0.0", "hostAddress": "10.0.0.12", "subnetMask": "255.255.255.0", "defaultGateway": "10.0.0.1", "operatingSystem": "windows", "pcapVersion": "1.10.4", "timestamp": "2026-11-26T08:00:00.000Z"});

const networkHost = Joi.object({
  id: Joi.string().required(),
  orgId: Joi.string().required(),
  ipAddress: Joi.string().required(),
  macAddress: Joi.string(),
  macVendor: Joi.string(),
  lastSeen: isoDateOut.required(),
  status: statusValue.required(),
}).label('NetworkHost').meta({ className: 'NetworkHost' });

const criteria = Joi.object<NetworkHostSearchCriteria>({
  orgId,
  ipAddress: ipOrCidr.description('an address, or a CIDR block'),
  macAddress,
  status: statusValue,
}).label('NetworkHostSearchCriteria').meta({ className: 'NetworkHostSearchCriteria' });

const discoveredHost = Joi.object<HostSighting>({
  orgId: orgId.required(),
  ipAddress: ipAddress.required(),
  macAddress: macAddress.allow('').empty(''),
  macVendor: Joi.string().trim().max(256).allow('').empty(''),
  lastSeen: instant.required(),
}).label('DiscoveredHost').meta({ className: 'DiscoveredHost' });

const discoveredResult = Joi.object({
  received: Joi.number().integer().min(0).required(),
  created: Joi.number().integer().min(0).required(),
  updated: Joi.number().integer().min(0).required(),
  unchanged: Joi.number().integer().min(0).required(),
}).label('DiscoveredHostsResult').meta({ className: 'DiscoveredHostsResult' });

const TAG = 'network';

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: true, roles: WRITERS, errors: [400, 401, 403, 500] });

export function networkRoutes(svc: NetworkService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, NetworkHeartbeat>({
      operationId: 'recordNetworkHeartbeat',
      method: 'POST',
      path: '/network-heartbeat',
      summary: "Store a network sensor's heartbeat and upsert the NetworkHost of its host address",
      lane: 'agent',
      body: heartbeatIn,
      responses: { 201: { description: 'Created', schema: heartbeatOut } },
      handler: async ({ body, access }) => created(await svc.recordHeartbeat(body, access)),
    }),
    route<{ endpointId: string }, { from?: string; to?: string; page: number; size: number }>({
      operationId: 'listNetworkHeartbeats',
      method: 'GET',
      path: '/network-heartbeat/endpoint/{endpointId}',
      summary: "An endpoint's heartbeats, newest first, optionally within [from, to)",
      lane: 'interactive',
      roles: READERS,
      extension: true,
      params: Joi.object({ endpointId: id.required() }),
      query: Joi.object({
        from: instant,
        to: instant,
        page: Joi.number().integer().min(0).default(0),
        size: Joi.number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
      }),
      responses: { 200: { description: 'OK', schema: pageSchema(heartbeatOut, 'NetworkHeartbeatPage') } },
      handler: async ({ params, query, access }) => {
        const pr: PageRequest = { page: query.page, size: query.size };
        return ok(await svc.listHeartbeats(params.endpointId, { from: query.from, to: query.to }, pr, access));
      },
    }),
    route<{ id: string; status: NetworkHostStatus }>({
      operationId: 'setNetworkHostStatus',
      method: 'PUT',
      path: '/network-host/{id}/status/{status}',
      summary: "Set a network host's status",
      lane: 'admin',
      params: Joi.object({ id: id.required(), status: statusValue.required() }),
      responses: { 200: { description: 'OK', schema: networkHost } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.setStatus(params.id, params.status, access)),
    }),
    route<{ id: string }>({
      operationId: 'getNetworkHost',
      method: 'GET',
      path: '/network-host/{id}',
      summary: 'One network host (realtime)',
      lane: 'interactive',
      roles: READERS,
      extension: true,
      params: Joi.object({ id: id.required() }),
      responses: { 200: { description: 'OK', schema: networkHost } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.getHost(params.id, access)),
    }),
    route<Record<string, never>, Record<string, never>, { criteria: NetworkHostSearchCriteria; pageRequest: PageRequest }>({
      operationId: 'searchNetworkHosts',
      method: 'POST',
      path: '/network-host/search-page',
      summary: 'Network hosts matching every given criteria field, paged (default: lastSeen, newest first)',
      lane: 'interactive',
      roles: READERS,
      body: pagedCriteriaSchema(criteria, Object.keys(HOST_SORT_FIELDS), 'PagedNetworkHostSearchCriteria').required(),
      responses: { 200: { description: 'OK', schema: pageSchema(networkHost, 'NetworkHostPage') } },
      handler: async ({ body, access }) => ok(await svc.search(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => svc.deepSearch(body.criteria, body.pageRequest, access),
    }),
    route<Record<string, never>, Record<string, never>, HostSighting[]>({
      operationId: 'ingestDiscoveredNetworkHosts',
      method: 'POST',
      path: '/network-host/discovered',
      summary: `Upsert discovered hosts by org and MAC (or IP when no MAC); at most ${MAX_DISCOVERED_HOSTS} per request (413 beyond)`,
      lane: 'report',
      extension: true,
      body: Joi.array().items(discoveredHost).required().label('DiscoveredHosts'),
      responses: { 200: { description: 'OK', schema: discoveredResult } },
      errors: [400, 401, 403, 409, 413, 500],
      handler: async ({ body, access }) => ok(await svc.ingestDiscovered(body, access) satisfies DiscoveredHostsResult),
    }),
  ];
}
