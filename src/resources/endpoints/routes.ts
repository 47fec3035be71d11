/** Spec 4.5: endpoints (agents), all sec. */
import Joi from 'joi';
import { READERS, WRITERS, type Role } from '../../access/principal.js';
import type { Access } from '../../access/access.js';
import { routeDefaults, noContent, ok, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import { orgId } from '../../http/schemas.js';
import type { EndpointCriteria } from './criteria.js';
import type { EndpointInput, EndpointService } from './service.js';
import { familyOf } from './model.js';
import { V_SEMVER } from './connection-state.js';
import {
  anyEndpointRecord,
  endpointIdParams,
  id,
  endpointRecord,
  polymorphicEndpointBody,
  ipListParam,
  ipParam,
  pagedEndpointCriteria,
  pageEndpoint,
} from './schema.js';
import { lteEndpointRoutes } from './lte-routes.js';
import { utmEndpointRoutes } from './utm-routes.js';

const TAG = 'endpoint';
const AGENT_WRITERS: readonly Role[] = [...WRITERS, 'agent'];
const AGENT_READERS: readonly Role[] = [...READERS, 'agent'];
const orgParams = Joi.object({ orgId: orgId.required() });
/** A v-prefixed semantic version as an agent reports it (v3.10.2, v3.11.0-rc.1). */
const reportedVersion = Joi.string()
  .max(64)
  .pattern(V_SEMVER, 'v-prefixed semantic version')
  .messages({ 'string.pattern.name': '"{{#value}}" is not a v-prefixed semantic version (e.g. v3.10.2)' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: true, roles: AGENT_WRITERS, errors: [400, 401, 403, 500] });

export function endpointRoutes(svc: EndpointService): RouteSpec[] {
  const connectionState = (
    operationId: string,
    action: 'connect' | 'disconnect' | 'uninstall',
    summary: string,
    errors: number[],
    update: (id: string, access: Access) => Promise<void>,
  ): RouteSpec =>
    route<{ id: string }>({
      operationId,
      method: 'POST',
      path: `/endpoint/{id}/${action}`,
      summary,
      lane: 'agent',
      params: endpointIdParams,
      responses: { 204: { description: 'Recorded' } },
      errors,
      handler: async ({ params, access }) => {
        await update(params.id, access);
        return noContent();
      },
    });

  return [
    route<Record<string, never>, Record<string, never>, { criteria: EndpointCriteria; pageRequest: PageRequest }>({
      operationId: 'searchEndpoints',
      method: 'POST',
      path: '/endpoint/page-search',
      summary: 'Page through agents matching EndpointCriteria (free text, org, scanners, inactivity)',
      lane: 'interactive',
      roles: READERS,
      body: pagedEndpointCriteria,
      responses: { 200: { description: 'OK', schema: pageEndpoint } },
      handler: async ({ body, access }) => ok(await svc.queries.searchAgents(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => svc.queries.deepAgents(body.criteria, body.pageRequest, access),
    }),
    route<Record<string, never>, Record<string, never>, EndpointInput>({
      operationId: 'createEndpoint',
      method: 'POST',
      path: '/endpoint',
      summary: 'Create an endpoint of any family by its type (default VC_ENDPOINT; id generated when absent; 409 when it exists)',
      lane: 'admin',
      roles: WRITERS,
      idempotent: true,
      body: polymorphicEndpointBody().required(),
      responses: { 200: { description: 'OK', schema: anyEndpointRecord } },
      errors: [400, 401, 403, 409, 500],
      handler: async ({ body, access, createdId }) => ok(await svc.create(body, familyOf(body.type ?? 'VC_ENDPOINT'), access, createdId)),
    }),
    route<{ id: string }>({
      operationId: 'getEndpoint',
      method: 'GET',
      path: '/endpoint/{id}',
      summary: 'Read an endpoint of any family, in its own shape (an agent token: its own endpoint)',
      lane: 'agent',
      roles: AGENT_READERS,
      params: endpointIdParams,
      responses: { 200: { description: 'OK', schema: anyEndpointRecord } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.getRecord(params.id, access)),
    }),
    route<{ id: string }, Record<string, never>, EndpointInput>({
      operationId: 'replaceEndpoint',
      method: 'PUT',
      path: '/endpoint/{id}',
      summary: 'Replace an endpoint of any family (its type decides the shape); a stale integer version answers 409',
      lane: 'admin',
      roles: WRITERS,
      params: endpointIdParams,
      body: polymorphicEndpointBody().required(),
      responses: { 200: { description: 'OK', schema: anyEndpointRecord } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ params, body, access }) =>
        ok(await svc.replace(params.id, body, familyOf(body.type ?? 'VC_ENDPOINT'), access)),
    }),
    route<{ id: string }>({
      operationId: 'deleteEndpoint',
      method: 'DELETE',
      path: '/endpoint/{id}',
      summary: 'Soft-delete an endpoint of any family (404 to every read afterwards)',
      lane: 'admin',
      roles: WRITERS,
      params: endpointIdParams,
      responses: { 204: { description: 'Deleted' } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => {
        await svc.softDelete(params.id, access);
        return noContent();
      },
    }),
    connectionState('connectEndpoint', 'connect', 'The endpoint opened its persistent connection: CONNECTED, lastConnect = now', [400, 401, 403, 404, 500], (id, access) =>
      svc.connections.connect(id, access),
    ),
    connectionState('disconnectEndpoint', 'disconnect', 'The connection closed: DISCONNECTED, lastDisconnect = now', [400, 401, 403, 404, 500], (id, access) =>
      svc.connections.disconnect(id, access),
    ),
    connectionState('uninstallEndpoint', 'uninstall', 'The agent was uninstalled: UNINSTALLED', [400, 401, 403, 404, 500], (id, access) =>
      svc.connections.uninstall(id, access),
    ),
    route<{ id: string; hoh: string }>({
      operationId: 'setEndpointFimHoh',
      method: 'PATCH',
      path: '/endpoint/{id}/fim-hoh/{hoh}',
      summary: 'Record the file-integrity hash of hashes reported by the agent',
      lane: 'agent',
      params: Joi.object({ id: id.required(), hoh: Joi.string().trim().min(1).max(1024).required() }),
      responses: { 204: { description: 'Recorded' } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => {
        await svc.connections.setFimHoh(params.id, params.hoh, access);
        return noContent();
      },
    }),
    route<{ id: string; version: string }>({
      operationId: 'setEndpointClientVersion',
      method: 'PATCH',
      path: '/endpoint/{id}/client-version/{version}',
      summary:
        "Record the agent version the endpoint runs now (a v-prefixed semantic version): the agent's report after an upgrade, with its own agent token or an admin's; also a sign of life",
      lane: 'agent',
      extension: true,
      params: Joi.object({ id: id.required(), version: reportedVersion.required() }),
      responses: { 204: { description: 'Recorded' } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => {
        await svc.connections.setClientVersion(params.id, params.version, access);
        return noContent();
      },
    }),
    route<{ id: string; internalIps: string[]; externalIp: string }>({
      operationId: 'setEndpointAddresses',
      method: 'PATCH',
      path: '/endpoint/{id}/internal-ips/{internal-ips}/external-ip/{external-ip}',
      summary: 'Record internal addresses (comma-separated) and the external address; 409 when uninstalled or deleted',
      lane: 'agent',
      params: Joi.object({ id: id.required(), internalIps: ipListParam.required(), externalIp: ipParam.required() }),
      responses: { 204: { description: 'Recorded' } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ params, access }) => {
        await svc.connections.setAddresses(params.id, params.internalIps, params.externalIp, access);
        return noContent();
      },
    }),
    route<{ orgId: string }>({
      operationId: 'getEndpointsOfChildOrgs',
      method: 'GET',
      path: '/endpoint/by-org-id/{orgId}/direct-children',
      summary: "Agents of the organization's direct child organizations (not its own)",
      lane: 'heavy',
      roles: READERS,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointRecord) } },
      handler: async ({ params, access }) => ok(await svc.queries.agentsBelow(params.orgId, 'children', access)),
    }),
    route<{ orgId: string }>({
      operationId: 'getEndpointsOfDescendantOrgs',
      method: 'GET',
      path: '/endpoint/by-org-id/{orgId}/all-descendants',
      summary: 'Agents of every organization below the organization (not its own)',
      lane: 'heavy',
      roles: READERS,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointRecord) } },
      handler: async ({ params, access }) => ok(await svc.queries.agentsBelow(params.orgId, 'descendants', access)),
    }),
  ];
}

/** Every route of the endpoint family: 4.2, 4.3 and 4.5 (less the two of the commands resource). */
export function endpointFamilyRoutes(svc: EndpointService): RouteSpec[] {
  return [...utmEndpointRoutes(svc), ...lteEndpointRoutes(svc), ...endpointRoutes(svc)];
}
