/**
 * Enabled modules (spec 4.6): one EnabledModules record per endpoint and one per
 * organization, the organization summary for the UI, install confirmation and bundle
 * subscriptions. Other resources ask this service (`effectiveModuleStatus`), never the store.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import type { Stored } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { checkIntegerVersion } from '../../store/versions.js';
import type { EndpointService } from '../endpoints/service.js';
import type { OrganizationService } from '../organizations/service.js';
import type { BundleService } from '../bundles/service.js';
import { MODULE_NAMES, type ModuleName } from '../module-names.js';
import type { Bundle } from '../bundles/model.js';
import {
  moduleFieldsOf,
  type DynamicModuleStatus,
  type EnabledModules,
  type EnabledModulesDoc,
  type ModuleFields,
  type ModuleScope,
  type OrgEnabledModules,
} from './model.js';
import type { EnabledModulesStore } from './store.js';
import { conditionOn } from '../../store/doc-types.js';

/** An EnabledModules body after validation (server-owned fields stripped). */
export interface EnabledModulesInput extends ModuleFields {
  id?: string;
  orgId?: string;
  version?: number;
}

export function toEnabledModules(hit: Stored<EnabledModulesDoc>): EnabledModules {
  const d = hit.doc;
  return {
    id: d.id,
    orgId: d.orgId,
    ...moduleFieldsOf(d),
    version: hit.version,
    createdBy: d.createdBy,
    updatedBy: d.updatedBy,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/** OrgEnabledModules from an organization's module fields (absent record: all false). */
export function orgSummary(fields: ModuleFields | undefined): OrgEnabledModules {
  return {
    avEnabled: fields?.antivirus === 'ACTIVE',
    fimEnabled: fields?.fim === 'ACTIVE',
    panEnabled: fields?.pan === 'ACTIVE',
    windowsEventLogEnabled: fields?.wel === 'ACTIVE',
  };
}

/** Turns every PENDING module ACTIVE; undefined when nothing is pending. */
export function confirmPending(fields: ModuleFields): ModuleFields | undefined {
  const out = moduleFieldsOf(fields);
  let changed = false;
  for (const [m, v] of Object.entries(out) as [ModuleName, DynamicModuleStatus][]) {
    if (v === 'PENDING') {
      out[m] = 'ACTIVE';
      changed = true;
    }
  }
  return changed ? out : undefined;
}

/** Subscribing: the bundle's modules become PENDING, except those already ACTIVE. */
export function withBundleSubscribed(fields: ModuleFields, modules: readonly ModuleName[]): ModuleFields {
  const out = moduleFieldsOf(fields);
  for (const m of modules) if (out[m] !== 'ACTIVE') out[m] = 'PENDING';
  return out;
}

/** Unsubscribing: the bundle's modules become INACTIVE, except those another subscribed bundle still includes. */
export function withBundleUnsubscribed(
  fields: ModuleFields,
  modules: readonly ModuleName[],
  stillSubscribed: readonly Bundle[],
): ModuleFields {
  const covered = new Set(stillSubscribed.flatMap((b) => b.modules));
  const out = moduleFieldsOf(fields);
  for (const m of modules) if (!covered.has(m)) out[m] = 'INACTIVE';
  return out;
}

/** A document without its module fields (so a computed set replaces them whole). */
function stripModules<T extends ModuleFields>(doc: T): Omit<T, ModuleName> {
  const out: Record<string, unknown> = { ...doc };
  for (const m of MODULE_NAMES) delete out[m];
  return out as Omit<T, ModuleName>;
}

export class ModuleService {
  constructor(
    private readonly store: EnabledModulesStore,
    private readonly endpoints: EndpointService,
    private readonly orgs: OrganizationService,
    private readonly bundles: BundleService,
  ) {}

  /**
   * The status of one module for an endpoint: the endpoint's own record when it has that
   * field, else the organization's record, else undefined. One store round trip; no
   * authorization (callers have already resolved the endpoint).
   */
  async effectiveModuleStatus(
    endpointId: string,
    orgId: string,
    module: ModuleName,
  ): Promise<'PENDING' | 'ACTIVE' | 'INACTIVE' | undefined> {
    const { endpoint, org } = await this.store.getPair(endpointId, orgId);
    return endpoint?.doc[module] ?? org?.doc[module];
  }

  /** Resolves the scope's owner and checks the caller may reach it; answers the record's orgId. */
  private async owner(scope: ModuleScope, id: string, access: Access): Promise<string> {
    if (scope === 'endpoint') return (await this.endpoints.getVisible(id, access)).doc.orgId;
    await access.assertOrg(id);
    await this.orgs.assertExists(id);
    return id;
  }

  private static noun(scope: ModuleScope, id: string): string {
    return scope === 'endpoint' ? `endpoint ${id}` : `organization ${id}`;
  }

  /** The id and orgId of a body must name the record of the path when given. */
  private static checkIdentity(scope: ModuleScope, id: string, orgId: string, body: EnabledModulesInput): void {
    if (body.id !== undefined && body.id !== id) {
      throw new ValidationError(`body.id: "${body.id}" does not match the ${scope === 'endpoint' ? 'endpoint' : 'organization'} id ${id} of the path`);
    }
    if (body.orgId !== undefined && body.orgId !== orgId) {
      throw new ValidationError(`body.orgId: "${body.orgId}" does not match the record's organization ${orgId}`);
    }
  }

  /** GET: 404 when the record was never written. */
  async get(scope: ModuleScope, id: string, access: Access): Promise<EnabledModules> {
    await this.owner(scope, id, access);
    const hit = await this.store.get(scope, id);
    if (!hit) throw new NotFoundError(`${ModuleService.noun(scope, id)} has no enabled modules`);
    return toEnabledModules(hit);
  }

  /** POST: creates the record; 409 when it exists. */
  async create(scope: ModuleScope, id: string, body: EnabledModulesInput, access: Access): Promise<EnabledModules> {
    const orgId = await this.owner(scope, id, access);
    ModuleService.checkIdentity(scope, id, orgId, body);
    const now = new Date().toISOString();
    const by = access.userKey.username;
    const doc: EnabledModulesDoc = {
      scope,
      id,
      orgId,
      ...moduleFieldsOf(body),
      ...(scope === 'org' ? { subscribedBundles: [] } : {}),
      createdBy: by,
      updatedBy: by,
      createdAt: now,
      updatedAt: now,
    };
    try {
      return toEnabledModules(await this.store.create(doc));
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new ConflictError(`${ModuleService.noun(scope, id)} already has enabled modules; use PUT to replace them`);
      }
      throw err;
    }
  }

  /** PUT: replaces the module fields (absent fields become absent); 404 when never written, 409 on a stale version. */
  async replace(scope: ModuleScope, id: string, body: EnabledModulesInput, access: Access): Promise<EnabledModules> {
    const orgId = await this.owner(scope, id, access);
    ModuleService.checkIdentity(scope, id, orgId, body);
    const cur = await this.store.get(scope, id);
    if (!cur) throw new NotFoundError(`${ModuleService.noun(scope, id)} has no enabled modules; use POST to create them`);
    const cond = checkIntegerVersion(body.version, cur);
    const doc: EnabledModulesDoc = {
      scope,
      id,
      orgId,
      ...moduleFieldsOf(body),
      ...(scope === 'org' ? { subscribedBundles: cur.doc.subscribedBundles ?? [] } : {}),
      createdBy: cur.doc.createdBy,
      updatedBy: access.userKey.username,
      createdAt: cur.doc.createdAt,
      updatedAt: new Date().toISOString(),
    };
    return toEnabledModules(await this.store.replace(doc, cond));
  }

  /**
   * Sets one module of a record, keeping its other fields, and creates the record when it has
   * none (extension: bulk actions). A read and one conditional write, retried on a
   * fresh read when another writer got in between (store/optimistic.ts); no write when the
   * module already has that status, so setting it again changes nothing.
   */
  async setModule(scope: ModuleScope, id: string, module: ModuleName, status: 'ACTIVE' | 'INACTIVE', access: Access): Promise<void> {
    const orgId = await this.owner(scope, id, access);
    await this.modify(scope, id, access, (cur) =>
      cur?.doc[module] === status ? undefined : { ...(cur?.doc ?? ModuleService.fresh(scope, id, orgId, access)), orgId, [module]: status },
    );
  }

  /** installcomplete: the organization's PENDING modules become ACTIVE; 404 when it has no record. */
  async installComplete(orgId: string, access: Access): Promise<void> {
    await this.owner('org', orgId, access);
    await this.modify('org', orgId, access, (cur) => {
      if (!cur) throw new NotFoundError(`organization ${orgId} has no enabled modules`);
      const next = confirmPending(cur.doc);
      return next ? { ...cur.doc, ...next } : undefined;
    });
  }

  /** OrgEnabledModules of the caller's own organization (the token's org). */
  async orgSummaryFor(access: Access): Promise<OrgEnabledModules> {
    const orgId = access.principal.orgId;
    if (!orgId) throw new ForbiddenError('the token belongs to no organization');
    const hit = await this.store.get('org', orgId);
    return orgSummary(hit?.doc);
  }

  /**
   * POST /org/{orgId}/bundle/{bundleId}: subscribes the organization to the bundle and adds
   * its modules as PENDING (ACTIVE ones stay ACTIVE), creating the record when absent.
   */
  async subscribe(orgId: string, bundleId: string, body: { id?: string }, access: Access): Promise<EnabledModules> {
    await this.owner('org', orgId, access);
    if (body.id !== undefined && body.id !== bundleId) {
      throw new ValidationError(`body.id: "${body.id}" does not match the bundle id ${bundleId} of the path`);
    }
    const bundle = await this.bundles.get(bundleId);
    const hit = await this.modify('org', orgId, access, (cur) => {
      const base = cur?.doc ?? ModuleService.fresh('org', orgId, orgId, access);
      const subscribed = base.subscribedBundles ?? [];
      return {
        ...stripModules(base),
        ...withBundleSubscribed(base, bundle.modules),
        subscribedBundles: subscribed.includes(bundleId) ? subscribed : [...subscribed, bundleId],
      };
    });
    return toEnabledModules(hit);
  }

  /**
   * DELETE /org/{orgId}/bundle/{bundleId}: ends the subscription and sets the bundle's
   * modules INACTIVE unless another bundle the organization still subscribes to includes
   * them. Idempotent; 404 when the bundle is unknown or the organization has no record.
   */
  async unsubscribe(orgId: string, bundleId: string, access: Access): Promise<EnabledModules> {
    await this.owner('org', orgId, access);
    const bundle = await this.bundles.get(bundleId);
    return readModifyWrite(async () => {
      const cur = await this.store.get('org', orgId);
      if (!cur) throw new NotFoundError(`organization ${orgId} has no enabled modules`);
      const remaining = (cur.doc.subscribedBundles ?? []).filter((b) => b !== bundleId);
      const others = await this.bundles.getMany(remaining);
      const doc: EnabledModulesDoc = {
        ...stripModules(cur.doc),
        ...withBundleUnsubscribed(cur.doc, bundle.modules, others),
        subscribedBundles: remaining,
        updatedBy: access.userKey.username,
        updatedAt: new Date().toISOString(),
      };
      return toEnabledModules(await this.store.replace(doc, conditionOn(cur)));
    });
  }

  /** The bundles the organization subscribes to (extension). */
  async subscriptions(orgId: string, access: Access): Promise<Bundle[]> {
    await this.owner('org', orgId, access);
    const hit = await this.store.get('org', orgId);
    return this.bundles.getMany(hit?.doc.subscribedBundles ?? []);
  }

  /** A record not yet stored: no module set, created now by the caller. */
  private static fresh(scope: ModuleScope, id: string, orgId: string, access: Access): Omit<EnabledModulesDoc, 'updatedAt' | 'updatedBy'> {
    return {
      scope,
      id,
      orgId,
      ...(scope === 'org' ? { subscribedBundles: [] } : {}),
      createdBy: access.userKey.username,
      createdAt: new Date().toISOString(),
    };
  }

  /**
   * Read-modify-write of a scope's record with optimistic retries: `change` computes the next
   * document (module fields and subscriptions) from the current one, or from none (then the
   * record is created); undefined means nothing to write. Answers the record as stored afterwards.
   */
  protected async modify(
    scope: ModuleScope,
    id: string,
    access: Access,
    change: (cur: Stored<EnabledModulesDoc> | undefined) => Omit<EnabledModulesDoc, 'updatedAt' | 'updatedBy'> | undefined,
  ): Promise<Stored<EnabledModulesDoc>> {
    return readModifyWrite(async () => {
      const cur = await this.store.get(scope, id);
      const next = change(cur);
      if (!next) {
        if (!cur) throw new NotFoundError(`${ModuleService.noun(scope, id)} has no enabled modules`);
        return cur;
      }
      const doc: EnabledModulesDoc = { ...next, updatedBy: access.userKey.username, updatedAt: new Date().toISOString() };
      return cur ? await this.store.replace(doc, conditionOn(cur)) : await this.store.create(doc);
    });
  }
}
