/**
 * The org-configs index: one EndpointOrgConfig per organization, keyed by orgId (the
 * client-version pins the client-versions resource sets; no routes of its own).
 */
import { DocStore, type Stored } from '../../store/doc-store.js';
import type { StoreContext } from '../../store/client.js';
import type { UserKey } from '../../domain.js';

export interface EndpointOrgConfigDoc {
  orgId: string;
  activated?: boolean;
  licenseKey?: string;
  /** Deprecated single pin for every operating system. */
  targetVersion?: string | null;
  targetVersionLinux?: string | null;
  targetVersionMac?: string | null;
  targetVersionWindows?: string | null;
  createdAt: string;
  createdBy: UserKey;
  updatedAt: string;
  updatedBy: UserKey;
}

export type EndpointOrgConfigPins = Pick<EndpointOrgConfigDoc, 'targetVersion' | 'targetVersionLinux' | 'targetVersionMac' | 'targetVersionWindows'>;

export class EndpointOrgConfigStore {
  private readonly docs: DocStore<EndpointOrgConfigDoc>;
  constructor(ctx: StoreContext) {
    this.docs = new DocStore<EndpointOrgConfigDoc>(ctx, 'org-configs', 'organization configuration');
  }

  get(orgId: string): Promise<Stored<EndpointOrgConfigDoc> | undefined> {
    return this.docs.get(orgId);
  }

  /** Sets the pins in one partial update, creating the configuration when absent. */
  setPins(orgId: string, pins: EndpointOrgConfigPins, by: UserKey): Promise<Stored<EndpointOrgConfigDoc>> {
    const now = new Date().toISOString();
    return this.docs.patch(
      orgId,
      { ...pins, updatedAt: now, updatedBy: by },
      { upsert: { orgId, ...pins, createdAt: now, createdBy: by, updatedAt: now, updatedBy: by } },
    );
  }

  /** Every configuration with a non-empty pin (legacy or per-OS), streamed. */
  async *withPins(): AsyncGenerator<EndpointOrgConfigDoc[]> {
    const fields = ['targetVersion', 'targetVersionLinux', 'targetVersionMac', 'targetVersionWindows'];
    const query = { bool: { should: fields.map((field) => ({ exists: { field } })), minimum_should_match: 1 } };
    for await (const batch of this.docs.scan(query, { sort: [{ orgId: 'asc' }] })) yield batch.map((h) => h.doc);
  }
}
