/** Spec 4.10: software inventory per endpoint and per organization (all sec). */
import Joi from 'joi';
import { READERS, type Role } from '../../access/principal.js';
import { routeDefaults, created, noContent, ok, type RouteSpec } from '../../http/routes.js';
import type { InstalledSoftware, SoftwareChange } from './model.js';
import type { SoftwareInventoryService } from './service.js';
import type { PagedSearch } from './org-views.js';
import {
  endpointInstalledSoftware,
  endpointInstalledSoftwareCount,
  endpointInstalledSoftwareWithName,
  endpointNameParams,
  endpointParams,
  installedSoftwareForPath,
  installedSoftwareList,
  orgParams,
  orgSoftwareParams,
  pagedSoftwareInventorySearchCriteria,
  pagedSummarySoftwareInventorySearchCriteria,
  pageEndpointInstalledSoftwareCount,
  pageSoftwareInventoryData,
  softwareChange,
} from './schema.js';

const TAG = 'software-inventory';
/** Agents read and write their own endpoint's inventory (getVisible confines them to it). */
const ENDPOINT_READERS: readonly Role[] = ['admin', 'reader', 'agent'];
const ENDPOINT_WRITERS: readonly Role[] = ['admin', 'agent'];
const ORG_NOTE = 'Covers exactly this organization, not its subtree; deleted and uninstalled endpoints are left out.';
const LIST_NOTE = 'At most 100,000 entries; a larger result answers 400 pointing to the paged summary.';

type EndpointParams = { id: string };
type EndpointNameParams = { id: string; name: string };
type OrgParams = { id: string };
type OrgSoftwareParams = { id: string; softwareName: string; softwareVersion: string };
type SingleItem = Partial<InstalledSoftware> & { version: string };

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: TAG, sec: true, roles: READERS, errors: [400, 401, 403, 404, 500] });

export function softwareInventoryRoutes(svc: SoftwareInventoryService): RouteSpec[] {
  return [
    route<OrgParams>({
      operationId: 'getOrgSoftwareInventory',
      method: 'GET',
      path: '/org/{id}/software-inventory',
      summary: `Every installed-software entry of the organization's endpoints. ${ORG_NOTE} ${LIST_NOTE}`,
      lane: 'heavy',
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      handler: async ({ params, access }) => ok(await svc.org.listForOrg(params.id, access)),
    }),
    route<OrgSoftwareParams>({
      operationId: 'getOrgSoftwareInventoryBySoftware',
      method: 'GET',
      path: '/org/{id}/software-inventory/{software-name}/{software-version}',
      summary: `The organization's endpoints' entries of one software name and version. ${ORG_NOTE} ${LIST_NOTE}`,
      lane: 'heavy',
      params: orgSoftwareParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      handler: async ({ params, access }) =>
        ok(await svc.org.listForOrgSoftware(params.id, params.softwareName, params.softwareVersion, access)),
    }),
    route<OrgSoftwareParams>({
      operationId: 'getOrgEndpointSoftwareInventory',
      method: 'GET',
      path: '/org/{id}/endpoint-software-inventory/{software-name}/{software-version}',
      summary: `As software-inventory/{software-name}/{software-version}, each entry with its endpoint's displayName. ${ORG_NOTE} ${LIST_NOTE}`,
      lane: 'heavy',
      params: orgSoftwareParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftwareWithName) } },
      handler: async ({ params, access }) =>
        ok(await svc.org.listForOrgSoftwareWithNames(params.id, params.softwareName, params.softwareVersion, access)),
    }),
    route<OrgParams>({
      operationId: 'getOrgSoftwareInventorySummary',
      method: 'GET',
      path: '/org/{id}/software-inventory-summary',
      summary: `Number of endpoints per software name and version, by name and version. ${ORG_NOTE} At most 100,000 pairs (400 beyond: use search-page).`,
      lane: 'heavy',
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftwareCount) } },
      handler: async ({ params, access }) => ok(await svc.org.summary(params.id, access)),
    }),
    route<OrgParams, Record<string, never>, PagedSearch>({
      operationId: 'searchOrgSoftwareInventorySummary',
      method: 'POST',
      path: '/org/{id}/software-inventory-summary/search-page',
      summary:
        `One page of the per-(name, version) endpoint counts, filtered by name (exact or case-insensitive prefix), version and vendor. ${ORG_NOTE} ` +
        'Sort by name/version pages without a depth limit; sort by count (first sort field only) reaches the first 10,000 pairs. ' +
        'totalCount is the number of distinct pairs: exact up to 50,000, an estimate (HyperLogLog++) beyond.',
      lane: 'interactive',
      params: orgParams,
      body: pagedSummarySoftwareInventorySearchCriteria,
      responses: { 200: { description: 'OK', schema: pageEndpointInstalledSoftwareCount } },
      handler: async ({ params, body, access }) => ok(await svc.org.summaryPage(params.id, body, access)),
      deepSearch: ({ params, body, access }) => svc.org.deepSummary(params.id, body, access),
    }),
    route<EndpointParams>({
      operationId: 'getEndpointSoftwareInventory',
      method: 'GET',
      path: '/endpoint/{id}/software-inventory',
      summary: "The endpoint's installed software, by name and version",
      lane: 'agent',
      roles: ENDPOINT_READERS,
      params: endpointParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      handler: async ({ params, access }) => ok(await svc.listForEndpoint(params.id, access)),
    }),
    route<EndpointParams, Record<string, never>, InstalledSoftware[]>({
      operationId: 'replaceEndpointSoftwareInventory',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory',
      summary:
        "The agent's full inventory: afterwards the endpoint's stored inventory equals the array (new entries created, " +
        'vanished ones removed, unchanged ones keep firstSeen). Duplicates count once; more than 10,000 distinct entries → 413.',
      lane: 'report',
      roles: ENDPOINT_WRITERS,
      params: endpointParams,
      body: installedSoftwareList,
      responses: { 201: { description: 'Created' } },
      errors: [400, 401, 403, 404, 413, 500],
      handler: async ({ params, body, access }) => {
        await svc.replaceForEndpoint(params.id, body, access);
        return { status: 201 };
      },
    }),
    // Declared before POST .../{name} so that "search-page" is not taken for a software name.
    route<EndpointParams, Record<string, never>, PagedSearch>({
      operationId: 'searchEndpointSoftwareInventory',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory/search-page',
      summary: "One page of the endpoint's installed software, filtered by name (exact or case-insensitive prefix), version and vendor",
      lane: 'interactive',
      roles: ENDPOINT_READERS,
      params: endpointParams,
      body: pagedSoftwareInventorySearchCriteria,
      responses: { 200: { description: 'OK', schema: pageSoftwareInventoryData } },
      handler: async ({ params, body, access }) => ok(await svc.searchForEndpoint(params.id, body, access)),
      deepSearch: ({ params, body, access }) => svc.deepForEndpoint(params.id, body, access),
    }),
    route<EndpointNameParams, Record<string, never>, SingleItem>({
      operationId: 'addEndpointSoftware',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary: 'Adds newly installed software (a repeat keeps firstSeen and refreshes the other fields)',
      lane: 'agent',
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: installedSoftwareForPath,
      responses: { 201: { description: 'Created', schema: endpointInstalledSoftware } },
      handler: async ({ params, body, access }) => created(await svc.add(params.id, params.name, body, access)),
    }),
    route<EndpointNameParams, Record<string, never>, SingleItem>({
      operationId: 'removeEndpointSoftware',
      method: 'DELETE',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary: 'Removes uninstalled software (the body names the version); 404 when the endpoint does not have it',
      lane: 'agent',
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: installedSoftwareForPath,
      responses: { 204: { description: 'No Content' } },
      handler: async ({ params, body, access }) => {
        await svc.remove(params.id, params.name, body, access);
        return noContent();
      },
    }),
    route<EndpointNameParams, Record<string, never>, SoftwareChange>({
      operationId: 'changeEndpointSoftwareVersion',
      method: 'PUT',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary:
        'Moves software to a new version; previousVersion picks the entry (required when the endpoint has several versions of the name: 400 without it); 404 when unknown',
      lane: 'agent',
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: softwareChange,
      responses: { 200: { description: 'OK', schema: endpointInstalledSoftware } },
      handler: async ({ params, body, access }) => ok(await svc.change(params.id, params.name, body, access)),
    }),
  ];
}
