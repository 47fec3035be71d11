/** Organization agent configuration (spec 4.9 POST /config/org, and its read-back). */
import type { Access } from '../../access/access.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { OrganizationService } from '../organizations/service.js';
import type { Config, StoredConfig } from './model.js';
import type { OrgAgentConfigDoc, OrgAgentConfigStore } from './store.js';

function toConfig(doc: OrgAgentConfigDoc): StoredConfig {
  return {
    orgId: doc.orgId,
    fields: doc.fields,
    createdAt: doc.createdAt,
    createdBy: doc.createdBy,
    updatedAt: doc.updatedAt,
    updatedBy: doc.updatedBy,
  };
}

export class OrgAgentConfigService {
  constructor(
    private readonly store: OrgAgentConfigStore,
    private readonly orgs: OrganizationService,
    /** Called after a configuration is written (presence re-reads its timeouts). */
    private readonly onChange: () => void = () => undefined,
  ) {}

  /** Organizations whose agent configuration overrides the presence timeout → seconds. */
  presenceTimeouts(): Promise<ReadonlyMap<string, number>> {
    return this.store.presenceTimeouts();
  }

  /**
   * POST /config/org: replaces the organization's agent configuration (last write wins).
   * An org outside the caller's subtree → 403; an unregistered org → 400 (no 404 declared).
   */
  async put(input: Config, access: Access): Promise<StoredConfig> {
    await access.assertOrg(input.orgId);
    if (!(await this.orgs.exists(input.orgId))) throw new ValidationError(`body.orgId: organization ${input.orgId} is not registered`);
    const previous = await this.store.get(input.orgId);
    const now = new Date().toISOString();
    const doc: OrgAgentConfigDoc = {
      orgId: input.orgId,
      fields: input.fields,
      ...(input.fields.presenceTimeoutSeconds !== undefined ? { presenceTimeoutSeconds: input.fields.presenceTimeoutSeconds } : {}),
      createdAt: previous?.doc.createdAt ?? now,
      createdBy: previous?.doc.createdBy ?? access.userKey,
      updatedAt: now,
      updatedBy: access.userKey,
    };
    await this.store.put(doc);
    this.onChange();
    return toConfig(doc);
  }

  /** GET /config/org/{orgId}: 404 for an unregistered org or one without configuration. */
  async get(orgId: string, access: Access): Promise<StoredConfig> {
    await access.assertOrg(orgId);
    await this.orgs.assertExists(orgId);
    const hit = await this.store.get(orgId);
    if (!hit) throw new NotFoundError(`organization ${orgId} has no agent configuration`);
    return toConfig(hit.doc);
  }
}
