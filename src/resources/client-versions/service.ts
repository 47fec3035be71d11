/**
 * Default and per-organization pinned agent versions (spec 4.1).
 * Effective defaults fall back per operating system: stored override → configured default
 * (ECS_DEFAULT_CLIENT_VERSIONS) → latest known release (data/client-releases.json).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Access } from '../../access/access.js';
import { ValidationError } from '../../errors.js';
import { toSeqNoPrimaryTerm, type SeqNoPrimaryTerm } from '../../store/versions.js';
import type { OrganizationService } from '../organizations/service.js';
import type { EndpointOrgConfigDoc, EndpointOrgConfigStore } from './endpoint-org-config-store.js';
import type { ClientVersionStore } from './store.js';
import { canonicalVersion, latestVersion } from './semver.js';
import type { UserKey } from '../../domain.js';

export const OPERATING_SYSTEMS = ['linux', 'mac', 'windows'] as const;
export type OperatingSystem = (typeof OPERATING_SYSTEMS)[number];

export type DefaultClientVersions = Record<OperatingSystem, string>;

export interface OrgTargetVersion {
  orgId: string;
  linux: string;
  mac: string;
  windows: string;
}

export interface EndpointOrgConfig {
  orgId: string;
  activated?: boolean;
  licenseKey?: string;
  targetVersion?: string;
  targetVersionLinux?: string;
  targetVersionMac?: string;
  targetVersionWindows?: string;
  createdBy: UserKey;
  updatedBy: UserKey;
  createdAt: string;
  updatedAt: string;
  version: SeqNoPrimaryTerm;
}

const defaultReleasesFile = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'data',
  'client-releases.json',
);

/** Parses `linux=1.2.3,mac=v1.2.0,windows=1.2.1` (any subset); throws on a bad entry. */
export function parseConfiguredDefaults(value: string | undefined): Partial<DefaultClientVersions> {
  const out: Partial<DefaultClientVersions> = {};
  if (!value) return out;
  for (const part of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [osName, version] = part.split('=').map((s) => s.trim());
    if (!OPERATING_SYSTEMS.includes(osName as OperatingSystem)) {
      throw new Error(`ECS_DEFAULT_CLIENT_VERSIONS: unknown operating system "${osName}"`);
    }
    const v = canonicalVersion(version ?? '');
    if (!v) throw new Error(`ECS_DEFAULT_CLIENT_VERSIONS: "${version}" is not a semantic version`);
    out[osName as OperatingSystem] = v;
  }
  return out;
}

/** The latest release per OS from a release file. */
export function loadLatestReleases(file: string | undefined): Partial<DefaultClientVersions> {
  const raw = JSON.parse(fs.readFileSync(file ?? defaultReleasesFile, 'utf8')) as Record<string, unknown>;
  const out: Partial<DefaultClientVersions> = {};
  for (const osName of OPERATING_SYSTEMS) {
    const list = raw[osName];
    const latest = Array.isArray(list) ? latestVersion(list.filter((x): x is string => typeof x === 'string')) : undefined;
    if (latest) out[osName] = latest;
  }
  return out;
}

function canonicalOrThrow(field: string, value: string): string {
  const v = canonicalVersion(value);
  if (!v) throw new ValidationError(`body.${field}: "${value}" is not a semantic version (e.g. 3.10.2 or v3.10.2)`);
  return v;
}

function pinsOf(orgId: string, doc: Partial<EndpointOrgConfigDoc> | undefined): OrgTargetVersion {
  const legacy = doc?.targetVersion ?? '';
  return {
    orgId,
    linux: doc?.targetVersionLinux ?? legacy,
    mac: doc?.targetVersionMac ?? legacy,
    windows: doc?.targetVersionWindows ?? legacy,
  };
}

function toEndpointOrgConfig(doc: EndpointOrgConfigDoc, version: SeqNoPrimaryTerm): EndpointOrgConfig {
  const out: EndpointOrgConfig = {
    orgId: doc.orgId,
    createdBy: doc.createdBy,
    updatedBy: doc.updatedBy,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    version,
  };
  if (doc.activated !== undefined) out.activated = doc.activated;
  if (doc.licenseKey) out.licenseKey = doc.licenseKey;
  if (doc.targetVersion) out.targetVersion = doc.targetVersion;
  if (doc.targetVersionLinux) out.targetVersionLinux = doc.targetVersionLinux;
  if (doc.targetVersionMac) out.targetVersionMac = doc.targetVersionMac;
  if (doc.targetVersionWindows) out.targetVersionWindows = doc.targetVersionWindows;
  return out;
}

export class ClientVersionService {
  private readonly fallback: Partial<DefaultClientVersions>;

  constructor(
    private readonly store: ClientVersionStore,
    private readonly configs: EndpointOrgConfigStore,
    private readonly orgs: OrganizationService,
    configured: Partial<DefaultClientVersions>,
    releases: Partial<DefaultClientVersions>,
  ) {
    this.fallback = { ...releases, ...configured };
    for (const osName of OPERATING_SYSTEMS) {
      if (!this.fallback[osName]) throw new Error(`no configured default and no known release for ${osName}`);
    }
  }

  /** Effective defaults: stored override, else configured defaults, else latest releases. */
  async effectiveDefaults(): Promise<DefaultClientVersions> {
    const override = await this.store.getOverride();
    const out = {} as DefaultClientVersions;
    for (const osName of OPERATING_SYSTEMS) out[osName] = override?.[osName] || (this.fallback[osName] as string);
    return out;
  }

  async setDefaults(input: DefaultClientVersions, access: Access): Promise<DefaultClientVersions> {
    const doc = {
      linux: canonicalOrThrow('linux', input.linux),
      mac: canonicalOrThrow('mac', input.mac),
      windows: canonicalOrThrow('windows', input.windows),
      updatedAt: new Date().toISOString(),
      updatedBy: access.userKey,
    };
    await this.store.putOverride(doc);
    return { linux: doc.linux, mac: doc.mac, windows: doc.windows };
  }

  async clearDefaults(): Promise<DefaultClientVersions> {
    await this.store.clearOverride();
    return this.effectiveDefaults();
  }

  /** Every organization with a non-empty pin (legacy or per OS). */
  async listTargetVersions(access: Access): Promise<OrgTargetVersion[]> {
    const out: OrgTargetVersion[] = [];
    for await (const batch of this.configs.withPins()) {
      for (const doc of batch) if (await access.covers(doc.orgId)) out.push(pinsOf(doc.orgId, doc));
    }
    return out;
  }

  /** Pins per OS ('' clears one; at least one non-empty); clears the legacy pin. */
  async setTargetVersion(
    orgId: string,
    input: { linux: string; mac: string; windows: string },
    access: Access,
  ): Promise<OrgTargetVersion> {
    await this.orgs.assertExists(orgId);
    await access.assertOrg(orgId);
    const pin = (field: OperatingSystem): string | null =>
      input[field] === '' ? null : canonicalOrThrow(field, input[field]);
    const pins = {
      targetVersion: null,
      targetVersionLinux: pin('linux'),
      targetVersionMac: pin('mac'),
      targetVersionWindows: pin('windows'),
    };
    if (!pins.targetVersionLinux && !pins.targetVersionMac && !pins.targetVersionWindows) {
      throw new ValidationError('body: at least one of linux, mac and windows must be non-empty');
    }
    const stored = await this.configs.setPins(orgId, pins, access.userKey);
    return pinsOf(orgId, stored.doc);
  }

  /** Clears the legacy pin and every per-OS pin. */
  async clearTargetVersion(orgId: string, access: Access): Promise<OrgTargetVersion> {
    await this.orgs.assertExists(orgId);
    await access.assertOrg(orgId);
    const cleared = { targetVersion: null, targetVersionLinux: null, targetVersionMac: null, targetVersionWindows: null };
    const stored = await this.configs.setPins(orgId, cleared, access.userKey);
    return pinsOf(orgId, stored.doc);
  }

  /** The organization's EndpointOrgConfig with its SeqNoPrimaryTerm version. */
  async getOrgConfig(orgId: string, access: Access): Promise<EndpointOrgConfig | undefined> {
    await this.orgs.assertExists(orgId);
    await access.assertOrg(orgId);
    const hit = await this.configs.get(orgId);
    return hit ? toEndpointOrgConfig(hit.doc, toSeqNoPrimaryTerm(hit)) : undefined;
  }
}
