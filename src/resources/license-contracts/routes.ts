/** Spec 4.7: organization license contracts. */
import Joi from 'joi';
import { READERS, WRITERS } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { pagedCriteriaSchema, pageSchema } from '../../http/paging.js';
import type { PageRequest } from '../../domain.js';
import { isoDate, isoDateOut, orgId, serverOwnedFields } from '../../http/schemas.js';
import { LICENSE_TYPES, type LicenseType } from '../licenses/model.js';
import {
  CONTRACT_SORT_FIELDS,
  type OrgLicenseContractCriteria,
  type OrgLicenseContractInput,
  type OrgLicenseContractService,
} from './service.js';

const licenseType = Joi.string().valid(...LICENSE_TYPES);

const contractFields = {
  expirationDate: isoDate,
  nbrLicensesPurchased: Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER),
  version: Joi.number().integer().min(0).description('the version read; a stale one answers 409'),
  ...serverOwnedFields(Joi.string().allow('')),
};

const createBody = Joi.object({ orgId: orgId.required(), type: licenseType.required(), ...contractFields })
  .required()
  .label('OrgLicenseContract').meta({ className: 'NewOrgLicenseContract' });

const replaceBody = Joi.object({
  orgId: orgId.description('must match the path when given'),
  type: licenseType.description('must match the path when given'),
  ...contractFields,
})
  .required()
  .label('OrgLicenseContract').meta({ className: 'OrgLicenseContractUpdate' });

const orgLicenseContract = Joi.object({
  orgId: Joi.string().required(),
  type: licenseType.required(),
  expirationDate: isoDateOut,
  nbrLicensesPurchased: Joi.number().integer().min(0),
  createdBy: Joi.string().allow('').required(),
  updatedBy: Joi.string().allow('').required(),
  createdAt: isoDateOut.required(),
  updatedAt: isoDateOut.required(),
  version: Joi.number().integer().min(1).required(),
}).label('OrgLicenseContract').meta({ className: 'OrgLicenseContract' });

const criteria = Joi.object({ orgId, type: licenseType, version: Joi.number().integer().min(0) }).label(
  'OrgLicenseContractCriteria',
).meta({ className: 'OrgLicenseContractCriteria' });

const orgParams = Joi.object({ orgId: orgId.required() });
const orgTypeParams = Joi.object({ orgId: orgId.required(), type: licenseType.required() });

type OrgType = { orgId: string; type: LicenseType };

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'licenses', sec: true, roles: READERS, errors: [400, 401, 403, 404, 409, 500] });

export function orgLicenseContractRoutes(svc: OrgLicenseContractService): RouteSpec[] {
  return [
    route<{ orgId: string }>({
      operationId: 'getOrgLicenseContracts',
      method: 'GET',
      path: '/org-license-contract/org/{orgId}',
      summary: "An organization's license contracts (every license type it has one for)",
      lane: 'interactive',
      params: orgParams,
      responses: { 200: { description: 'OK', schema: Joi.array().items(orgLicenseContract) } },
      errors: [400, 401, 403, 500],
      handler: async ({ params, access }) => ok(await svc.ofOrg(params.orgId, access)),
    }),
    route<OrgType>({
      operationId: 'getOrgLicenseContract',
      method: 'GET',
      path: '/org-license-contract/org/{orgId}/type/{type}',
      summary: "An organization's license contract of one type",
      lane: 'interactive',
      params: orgTypeParams,
      responses: { 200: { description: 'OK', schema: orgLicenseContract } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.get(params.orgId, params.type, access)),
    }),
    route<OrgType, Record<string, never>, OrgLicenseContractInput>({
      operationId: 'putOrgLicenseContract',
      method: 'PUT',
      path: '/org-license-contract/org/{orgId}/type/{type}',
      summary: "Replace an organization's license contract of one type (a stale version answers 409)",
      lane: 'admin',
      roles: WRITERS,
      params: orgTypeParams,
      body: replaceBody,
      responses: { 200: { description: 'OK', schema: orgLicenseContract } },
      handler: async ({ params, body, access }) => ok(await svc.replace(params.orgId, params.type, body, access)),
    }),
    route<Record<string, never>, Record<string, never>, OrgLicenseContractInput & OrgType>({
      operationId: 'createOrgLicenseContract',
      method: 'POST',
      path: '/org-license-contract',
      summary: 'Create the license contract of an (organization, type) pair (409 when it exists)',
      lane: 'admin',
      roles: WRITERS,
      body: createBody,
      responses: { 200: { description: 'OK', schema: orgLicenseContract } },
      handler: async ({ body, access }) => ok(await svc.create(body, access)),
    }),
    route<Record<string, never>, Record<string, never>, { criteria: OrgLicenseContractCriteria; pageRequest: PageRequest }>({
      operationId: 'searchOrgLicenseContracts',
      method: 'POST',
      path: '/org-license-contract/searchPage',
      summary: 'Page through the license contracts matching every given criterion',
      lane: 'interactive',
      body: pagedCriteriaSchema(criteria, Object.keys(CONTRACT_SORT_FIELDS), 'PagedOrgLicenseContractCriteria'),
      responses: { 200: { description: 'OK', schema: pageSchema(orgLicenseContract, 'OrgLicenseContractPage') } },
      errors: [400, 401, 403, 500],
      handler: async ({ body, access }) => ok(await svc.searchPage(body.criteria, body.pageRequest, access)),
      deepSearch: ({ body, access }) => svc.deepSearch(body.criteria, body.pageRequest, access),
    }),
  ];
}
