/** Spec 4.8's vendor installation-data operation (its path is not shown; designed here). */
import Joi from 'joi';
import { WRITERS } from '../../access/principal.js';
import { routeDefaults, created, type RouteSpec } from '../../http/routes.js';
import { id, orgId } from '../../http/schemas.js';
import { VENDORS } from './store.js';
import type { AntivirusInstallationData, VendorDataService } from './service.js';

const vendorId = Joi.string().trim().min(1).max(256);

const antivirusInstallationData = Joi.object<AntivirusInstallationData>({
  endpointId: id.required(),
  orgId: orgId.required(),
  companyId: vendorId.required(),
  hardwareId: vendorId.required(),
})
  .required()
  .label('AntivirusInstallationData').meta({ className: 'AntivirusInstallationData' });

const vendorData = Joi.object({
  vendor: Joi.string()
    .valid(...VENDORS)
    .required(),
  uniqueId: Joi.string().required(),
  endpointId: Joi.string().required(),
  orgId: Joi.string().required(),
}).label('VendorData').meta({ className: 'VendorData' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'antivirus-vendor', sec: true, roles: WRITERS, errors: [400, 401, 403, 409, 500] });

export function vendorDataRoutes(svc: VendorDataService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, AntivirusInstallationData>({
      operationId: 'registerAntivirusInstallation',
      method: 'POST',
      path: '/vendor/antivirus/installation-data',
      summary: "Register an endpoint's antivirus installation (uniqueId is the vendor's hardwareId); once per endpoint",
      lane: 'agent',
      body: antivirusInstallationData,
      responses: { 201: { description: 'Created', schema: vendorData } },
      handler: async ({ body, access }) => created(await svc.registerAntivirus(body, access)),
    }),
  ];
}
