/**
 * Licenses (spec 4.7): read, create-or-replace, state changes through the state machine of
 * model.ts, and counting by LicenseCriteria. Every operation is limited to the caller's
 * organization subtree.
 */
import type { Access } from '../../access/access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { Query, Stored } from '../../store/doc-store.js';
import { readModifyWrite } from '../../store/optimistic.js';
import { checkIntegerVersion } from '../../store/versions.js';
import type { OrganizationService } from '../organizations/service.js';
import {
  canTransition,
  INITIAL_LICENSE_STATE,
  LICENSE_TRANSITIONS,
  transitionStamps,
  type LicenseDoc,
  type LicenseInfo,
  type LicenseState,
  type LicenseType,
} from './model.js';
import type { LicenseStore } from './store.js';

/** A LicenseInfo body after validation: the state-stamped dates are server-owned and stripped. */
export interface LicenseInput {
  id?: string;
  state?: LicenseState;
  type: LicenseType;
  orgId: string;
  ownerId?: string;
  daysInactiveBeforeDeactivation?: number;
  version?: number;
}

export interface LicenseCriteria {
  id?: string;
  state?: LicenseState;
  type?: LicenseType;
  orgId?: string;
  ownerId?: string;
  daysInactiveBeforeDeactivation?: number;
  version?: number;
}

export function toLicenseInfo(hit: Stored<LicenseDoc>): LicenseInfo {
  const d = hit.doc;
  const out: LicenseInfo = { id: d.id, state: d.state, type: d.type, creationDate: d.creationDate, orgId: d.orgId, version: hit.version };
  for (const k of ['activationDate', 'expirationDate', 'lastActiveDate', 'revocationDate', 'deactivationDate', 'ownerId'] as const) {
    if (d[k] !== undefined) out[k] = d[k];
  }
  if (d.daysInactiveBeforeDeactivation !== undefined) out.daysInactiveBeforeDeactivation = d.daysInactiveBeforeDeactivation;
  return out;
}

export class LicenseService {
  constructor(
    private readonly store: LicenseStore,
    private readonly orgs: OrganizationService,
  ) {}

  /** A license the caller may see; 404 when unknown, 403 outside the caller's subtree. */
  private async visible(id: string, access: Access): Promise<Stored<LicenseDoc>> {
    const hit = await this.store.get(id);
    if (!hit) throw new NotFoundError(`license ${id} not found`);
    await access.assertOrg(hit.doc.orgId);
    return hit;
  }

  async get(id: string, access: Access): Promise<LicenseInfo> {
    return toLicenseInfo(await this.visible(id, access));
  }

  /**
   * PUT: creates the license (state CREATED, creationDate now) or replaces its fields. The
   * state is changed only through `changeState`: a different state answers 409; a stale
   * version answers 409; the organization must be registered (404) and within reach (403).
   */
  async put(id: string, body: LicenseInput, access: Access): Promise<LicenseInfo> {
    if (body.id !== undefined && body.id !== id) {
      throw new ValidationError(`body.id: "${body.id}" does not match the license id ${id} of the path`);
    }
    await access.assertOrg(body.orgId);
    await this.orgs.assertExists(body.orgId);
    const attempt = async (): Promise<LicenseInfo> => {
      const cur = await this.store.get(id);
      const write = cur ? await this.replaceWith(cur, body, access) : this.createWith(id, body);
      return toLicenseInfo(await write());
    };
    // With a version a conflict is the client's stale read: 409. Without one the write is
    // last-write-wins: a writer that came between the read and the write (or a concurrent
    // create) only means the read must be repeated.
    return body.version !== undefined ? attempt() : readModifyWrite(attempt);
  }

  /** Decides a create (throwing its refusals) and answers the write to do. */
  private createWith(id: string, body: LicenseInput): () => Promise<Stored<LicenseDoc>> {
    if (body.version !== undefined) {
      throw new ConflictError(`stale version ${body.version}: license ${id} does not exist; omit version to create it`);
    }
    if (body.state !== undefined && body.state !== INITIAL_LICENSE_STATE) {
      throw new ConflictError(
        `a license is created in state ${INITIAL_LICENSE_STATE}, not ${body.state}; change it with PATCH /license/${id}/state/{licenseState}`,
      );
    }
    const doc: LicenseDoc = {
      id,
      state: INITIAL_LICENSE_STATE,
      type: body.type,
      creationDate: new Date().toISOString(),
      orgId: body.orgId,
      ...(body.ownerId !== undefined ? { ownerId: body.ownerId } : {}),
      ...(body.daysInactiveBeforeDeactivation !== undefined
        ? { daysInactiveBeforeDeactivation: body.daysInactiveBeforeDeactivation }
        : {}),
      version: 1,
    };
    return () => this.store.create(doc);
  }

  /** Decides a replace (throwing its refusals) and answers the write to do. */
  private async replaceWith(
    cur: Stored<LicenseDoc>,
    body: LicenseInput,
    access: Access,
  ): Promise<() => Promise<Stored<LicenseDoc>>> {
    await access.assertOrg(cur.doc.orgId);
    checkIntegerVersion(body.version, cur);
    if (body.state !== undefined && body.state !== cur.doc.state) {
      throw new ConflictError(
        `license ${cur.id} is ${cur.doc.state}: PUT cannot change the state; use PATCH /license/${cur.id}/state/${body.state}`,
      );
    }
    const { ownerId: _o, daysInactiveBeforeDeactivation: _d, ...kept } = cur.doc;
    const doc: LicenseDoc = {
      ...kept,
      type: body.type,
      orgId: body.orgId,
      ...(body.ownerId !== undefined ? { ownerId: body.ownerId } : {}),
      ...(body.daysInactiveBeforeDeactivation !== undefined
        ? { daysInactiveBeforeDeactivation: body.daysInactiveBeforeDeactivation }
        : {}),
    };
    return () => this.store.replace(doc, cur);
  }

  /** PATCH state: one move of the state machine, stamping its dates; 409 for a move it does not allow. */
  async changeState(id: string, to: LicenseState, access: Access): Promise<LicenseInfo> {
    // Only the write's own conflict (another write since the read) reads again; the refusal is final.
    return readModifyWrite(async () => {
      const cur = await this.visible(id, access);
      const from = cur.doc.state;
      if (!canTransition(from, to)) {
        const allowed = LICENSE_TRANSITIONS[from];
        throw new ConflictError(
          `license ${id} is ${from}; it cannot become ${to} (allowed: ${allowed.length > 0 ? allowed.join(', ') : `none, ${from} is final`})`,
        );
      }
      const doc: LicenseDoc = { ...cur.doc, state: to, ...transitionStamps(to, new Date().toISOString()) };
      return toLicenseInfo(await this.store.replace(doc, cur));
    });
  }

  /** Counts the licenses matching every given criterion, within the caller's subtree. */
  async count(criteria: LicenseCriteria, access: Access): Promise<number> {
    const filter: Query[] = [];
    for (const [field, value] of Object.entries(criteria) as [keyof LicenseCriteria, string | number | undefined][]) {
      if (value !== undefined) filter.push({ term: { [field]: value } });
    }
    if (criteria.orgId !== undefined) await access.assertOrg(criteria.orgId);
    const scope = await access.orgFilter('orgId');
    if (scope) filter.push(scope);
    return this.store.count({ bool: { filter } });
  }
}
