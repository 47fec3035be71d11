/**
 * Vendor installation data (spec 4.8's last row): an endpoint's registration with a
 * third-party vendor, one per endpoint and vendor.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { EndpointService } from '../endpoints/service.js';
import { vendorDataId, type Vendor, type VendorDataStore } from './store.js';

export interface AntivirusInstallationData {
  endpointId: string;
  orgId: string;
  companyId: string;
  hardwareId: string;
}

export interface VendorData {
  vendor: Vendor;
  uniqueId: string;
  endpointId: string;
  orgId: string;
}

export class VendorDataService {
  constructor(
    private readonly store: VendorDataStore,
    private readonly endpoints: EndpointService,
  ) {}

  /**
   * Registers the antivirus installation of an endpoint. The endpoint must exist in the
   * named org (400 otherwise: the operation declares no 404); a second registration → 409.
   */
  async registerAntivirus(input: AntivirusInstallationData, access: Access): Promise<VendorData> {
    await access.assertOrg(input.orgId);
    let orgOfEndpoint: string;
    try {
      orgOfEndpoint = (await this.endpoints.getVisible(input.endpointId, access)).doc.orgId;
    } catch (err) {
      if (err instanceof NotFoundError) throw new ValidationError(`body.endpointId: endpoint ${input.endpointId} not found`);
      throw err;
    }
    if (orgOfEndpoint !== input.orgId) {
      throw new ValidationError(`body.orgId: endpoint ${input.endpointId} belongs to organization ${orgOfEndpoint}, not ${input.orgId}`);
    }
    const vendor: Vendor = 'ANTIVIRUS_VENDOR';
    try {
      await this.store.create({
        id: vendorDataId(vendor, input.endpointId),
        vendor,
        uniqueId: input.hardwareId,
        endpointId: input.endpointId,
        orgId: input.orgId,
        companyId: input.companyId,
        hardwareId: input.hardwareId,
        createdAt: new Date().toISOString(),
        createdBy: access.userKey,
      });
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new ConflictError(`endpoint ${input.endpointId} is already registered with ${vendor}`);
      }
      throw err;
    }
    return { vendor, uniqueId: input.hardwareId, endpointId: input.endpointId, orgId: input.orgId };
  }

  /** The antivirus installation of an endpoint, when registered (for uninstall-protect). */
  async antivirusInstallation(
    endpointId: string,
  ): Promise<{ uniqueId: string; companyId: string; hardwareId: string } | undefined> {
    const hit = await this.store.get('ANTIVIRUS_VENDOR', endpointId);
    if (!hit) return undefined;
    return { uniqueId: hit.doc.uniqueId, companyId: hit.doc.companyId ?? '', hardwareId: hit.doc.hardwareId ?? '' };
  }
}
