/**
 * Organization pins follow the rollout (PUT /org-config/{orgId}/target-version): when a ring
 * takes whole organizations (an organization ring, or a ring that reaches 100 %), their pins
 * move to the target version, so agents that come later get it too. The pins they had are kept
 * in the rollout first, and a rollback restores them.
 */
import type { Access } from '../../access/access.js';
import type { PreviousPins, VersionByOs } from './model.js';

/** The client-versions resource's service, as far as pins go. */
export interface PinService {
  getOrgConfig(orgId: string, access: Access): Promise<{ targetVersion?: string; targetVersionLinux?: string; targetVersionMac?: string; targetVersionWindows?: string } | undefined>;
  setTargetVersion(orgId: string, input: { linux: string; mac: string; windows: string }, access: Access): Promise<unknown>;
  clearTargetVersion(orgId: string, access: Access): Promise<unknown>;
}

/** The pins of organizations as they are now. */
export async function readPins(svc: PinService, orgIds: string[], access: Access): Promise<PreviousPins[]> {
  const out: PreviousPins[] = [];
  for (const orgId of orgIds) {
    const cfg = await svc.getOrgConfig(orgId, access);
    const legacy = cfg?.targetVersion ?? '';
    out.push({
      orgId,
      linux: cfg?.targetVersionLinux ?? legacy,
      mac: cfg?.targetVersionMac ?? legacy,
      windows: cfg?.targetVersionWindows ?? legacy,
    });
  }
  return out;
}

/** Pins each organization to the target version (an OS without one keeps its previous pin). */
export async function applyPins(svc: PinService, orgIds: string[], target: VersionByOs, previous: PreviousPins[], access: Access): Promise<void> {
  for (const orgId of orgIds) {
    const prev = previous.find((p) => p.orgId === orgId);
    await svc.setTargetVersion(
      orgId,
      { linux: target.linux ?? prev?.linux ?? '', mac: target.mac ?? prev?.mac ?? '', windows: target.windows ?? prev?.windows ?? '' },
      access,
    );
  }
}

/** Puts every organization's pins back as they were before the rollout (cleared when it had none). */
export async function restorePins(svc: PinService, previous: PreviousPins[], access: Access): Promise<void> {
  for (const p of previous) {
    if (!p.linux && !p.mac && !p.windows) await svc.clearTargetVersion(p.orgId, access);
    else await svc.setTargetVersion(p.orgId, { linux: p.linux, mac: p.mac, windows: p.windows }, access);
  }
}

/**
 * The organizations whose pins a ring moves: an organization ring's, or, for a ring reaching
 * 100 %, the rollout's organization and every one with an agent in its subtree (also those
 * whose agents all went in earlier rings).
 */
export function pinnedBy(ring: { orgIds?: string[]; percent?: number }, rolloutOrg: string, fleetOrgs: string[]): string[] {
  if (ring.orgIds) return ring.orgIds;
  if (ring.percent === 100) return [...new Set([rolloutOrg, ...fleetOrgs])];
  return [];
}
