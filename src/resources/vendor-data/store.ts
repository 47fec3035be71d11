/** The vendor-data index: one VendorData per endpoint and vendor; the only code that touches it. */
import crypto from 'node:crypto';
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../domain.js';

export const VENDORS = ['ANTIVIRUS_VENDOR', 'DNS_FILTER'] as const;
export type Vendor = (typeof VENDORS)[number];

export interface VendorDataDoc {
  id: string;
  vendor: Vendor;
  uniqueId: string;
  endpointId: string;
  orgId: string;
  /** The antivirus vendor's customer and device ids (AntivirusInstallationData). */
  companyId?: string;
  hardwareId?: string;
  createdAt: string;
  createdBy: UserKey;
}

/**
 * One document per (vendor, endpoint): a second registration is a create conflict. The
 * endpoint id is hashed so the id stays within Elasticsearch's 512-byte limit.
 */
export function vendorDataId(vendor: Vendor, endpointId: string): string {
  return `${vendor}:${crypto.createHash('sha256').update(endpointId).digest('hex').slice(0, 40)}`;
}

export class VendorDataStore {
  private readonly docs: DocStore<VendorDataDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<VendorDataDoc>(ctx, 'vendor-data', 'vendor data');
  }

  /** Create-only: ConflictError when the endpoint is already registered for the vendor. */
  create(doc: VendorDataDoc): Promise<Stored<VendorDataDoc>> {
    return this.docs.create(doc.id, doc);
  }

  get(vendor: Vendor, endpointId: string): Promise<Stored<VendorDataDoc> | undefined> {
    return this.docs.get(vendorDataId(vendor, endpointId));
  }
}
