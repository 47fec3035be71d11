/** Spec 4.10: software inventory per endpoint and per organization (all sec). */
import Joi from 'joi';
import { READERS, type Role } from '../../http/auth.js';
import { created, defineRoute, noContent, ok, STD_ERRORS, type RouteSpec } from '../../http/routes.js';
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
const WITH_404 = [...STD_ERRORS, 404];
const ORG_NOTE = 'Covers exactly this organization, not its subtree; deleted and uninstalled endpoints are left out.';
const LIST_NOTE = 'At most 100,000 entries; a larger result answers 400 pointing to the paged summary.';

type EndpointParams = { id: string };
type EndpointNameParams = { id: string; name: string };
type OrgParams = { id: string };
type OrgSoftwareParams = { id: string; softwareName: string; softwareVersion: string };
type SingleItem = Partial<InstalledSoftware> & { version: string };

export function softwareInventoryRoutes(svc: SoftwareInventoryService): RouteSpec[] {
  return [
    defineRoute<OrgParams>({
      operationId: 'getOrgSoftwareInventory',
      method: 'GET',
      path: '/org/{id}/software-inventory',
      summary: `Every installed-software entry of the organization's endpoints. ${ORG_NOTE} ${LIST_NOTE}`,
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      errors: WITH_404,
      handler: async ({ params, access }) => ok(await svc.org.listForOrg(params.id, access)),
    }),
    defineRoute<OrgSoftwareParams>({
      operationId: 'getOrgSoftwareInventoryBySoftware',
      method: 'GET',
      path: '/org/{id}/software-inventory/{software-name}/{software-version}',
      summary: `The organization's endpoints' entries of one software name and version. ${ORG_NOTE} ${LIST_NOTE}`,
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      params: orgSoftwareParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      errors: WITH_404,
      handler: async ({ params, access }) =>
        ok(await svc.org.listForOrgSoftware(params.id, params.softwareName, params.softwareVersion, access)),
    }),
    defineRoute<OrgSoftwareParams>({
      operationId: 'getOrgEndpointSoftwareInventory',
      method: 'GET',
      path: '/org/{id}/endpoint-software-inventory/{software-name}/{software-version}',
      summary: `As software-inventory/{software-name}/{software-version}, each entry with its endpoint's displayName. ${ORG_NOTE} ${LIST_NOTE}`,
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      params: orgSoftwareParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftwareWithName) } },
      errors: WITH_404,
      handler: async ({ params, access }) =>
        ok(await svc.org.listForOrgSoftwareWithNames(params.id, params.softwareName, params.softwareVersion, access)),
    }),
    defineRoute<OrgParams>({
      operationId: 'getOrgSoftwareInventorySummary',
      method: 'GET',
      path: '/org/{id}/software-inventory-summary',
      summary: `Number of endpoints per software name and version, by name and version. ${ORG_NOTE} At most 100,000 pairs (400 beyond: use search-page).`,
      tag: TAG,
      lane: 'heavy',
      sec: true,
      roles: READERS,
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftwareCount) } },
      errors: WITH_404,
      handler: async ({ params, access }) => ok(await svc.org.summary(params.id, access)),
    }),
    defineRoute<OrgParams, Record<string, never>, PagedSearch>({
      operationId: 'searchOrgSoftwareInventorySummary',
      method: 'POST',
      path: '/org/{id}/software-inventory-summary/search-page',
      summary:
        `One page of the per-(name, version) endpoint counts, filtered by name (exact or case-insensitive prefix), version and vendor. ${ORG_NOTE} ` +
        'Sort by name/version pages without a depth limit; sort by count (first sort field only) reaches the first 10,000 pairs. ' +
        'totalCount is the number of distinct pairs: exact up to 50,000, an estimate (HyperLogLog++) beyond.',
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: READERS,
      params: orgParams,
      body: pagedSummarySoftwareInventorySearchCriteria,
      responses: { 200: { description: 'OK', schema: pageEndpointInstalledSoftwareCount } },
      errors: WITH_404,
      handler: async ({ params, body, access }) => ok(await svc.org.summaryPage(params.id, body, access)),
    }),
    defineRoute<EndpointParams>({
      operationId: 'getEndpointSoftwareInventory',
      method: 'GET',
      path: '/endpoint/{id}/software-inventory',
      summary: "The endpoint's installed software, by name and version",
      tag: TAG,
      lane: 'agent',
      sec: true,
      roles: ENDPOINT_READERS,
      params: endpointParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(endpointInstalledSoftware) } },
      errors: WITH_404,
      handler: async ({ params, access }) => ok(await svc.listForEndpoint(params.id, access)),
    }),
    defineRoute<EndpointParams, Record<string, never>, InstalledSoftware[]>({
      operationId: 'replaceEndpointSoftwareInventory',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory',
      summary:
        "The agent's full inventory: afterwards the endpoint's stored inventory equals the array (new entries created, " +
        'vanished ones removed, unchanged ones keep firstSeen). Duplicates count once; more than 10,000 distinct entries → 413.',
      tag: TAG,
      lane: 'agent',
      sec: true,
      roles: ENDPOINT_WRITERS,
      params: endpointParams,
      body: installedSoftwareList,
      responses: { 201: { description: 'Created' } },
      errors: [...WITH_404, 413],
      handler: async ({ params, body, access }) => {
        await svc.replaceForEndpoint(params.id, body, access);
        return { status: 201 };
      },
    }),
    // Declared before POST .../{name} so that "search-page" is not taken for a software name.
    defineRoute<EndpointParams, Record<string, never>, PagedSearch>({
      operationId: 'searchEndpointSoftwareInventory',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory/search-page',
      summary: "One page of the endpoint's installed software, filtered by name (exact or case-insensitive prefix), version and vendor",
      tag: TAG,
      lane: 'interactive',
      sec: true,
      roles: ENDPOINT_READERS,
      params: endpointParams,
      body: pagedSoftwareInventorySearchCriteria,
      responses: { 200: { description: 'OK', schema: pageSoftwareInventoryData } },
      errors: WITH_404,
      handler: async ({ params, body, access }) => ok(await svc.searchForEndpoint(params.id, body, access)),
    }),
    defineRoute<EndpointNameParams, Record<string, never>, SingleItem>({
      operationId: 'addEndpointSoftware',
      method: 'POST',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary: 'Adds newly installed software (a repeat keeps firstSeen and refreshes the other fields)',
      tag: TAG,
      lane: 'agent',
      sec: true,
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: installedSoftwareForPath,
      responses: { 201: { description: 'Created', schema: endpointInstalledSoftware } },
      errors: WITH_404,
      handler: async ({ params, body, access }) => created(await svc.add(params.id, params.name, body, access)),
    }),
    defineRoute<EndpointNameParams, Record<string, never>, SingleItem>({
      operationId: 'removeEndpointSoftware',
      method: 'DELETE',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary: 'Removes uninstalled software (the body names the version); 404 when the endpoint does not have it',
      tag: TAG,
      lane: 'agent',
      sec: true,
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: installedSoftwareForPath,
      responses: { 204: { description: 'No Content' } },
      errors: WITH_404,
      handler: async ({ params, body, access }) => {
        await svc.remove(params.id, params.name, body, access);
        return noContent();
      },
    }),
    defineRoute<EndpointNameParams, Record<string, never>, SoftwareChange>({
      operationId: 'changeEndpointSoftwareVersion',
      method: 'PUT',
      path: '/endpoint/{id}/software-inventory/{name}',
      summary:
        'Moves software to a new version; previousVersion picks the entry (required when the endpoint has several versions of the name: 400 without it); 404 when unknown',
      tag: TAG,
      lane: 'agent',
      sec: true,
      roles: ENDPOINT_WRITERS,
      params: endpointNameParams,
      body: softwareChange,
      responses: { 200: { description: 'OK', schema: endpointInstalledSoftware } },
      errors: WITH_404,
      handler: async ({ params, body, access }) => ok(await svc.change(params.id, params.name, body, access)),
    }),
  ];
}
