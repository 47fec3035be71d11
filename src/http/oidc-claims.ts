/**
 * The grants a person holds, read from the identity provider's roles claim
 * (ECS_OIDC_ROLES_CLAIM, default `ecs_roles`): values `<role>@<orgId>`, role `reader` or
 * `admin`. The identity provider is the source of truth; the service keeps no user table.
 * `system` is granted by a claim only when the operator allows it (ECS_OIDC_ALLOW_SYSTEM_GRANT).
 */
import type { Grant } from '../access/principal.js';

/** An organization id as the API accepts one (src/http/schemas.ts `id`). */
const ORG_ID = /^[^\s/\\?#]{1,256}$/;

export interface ClaimGrants {
  grants: Grant[];
  /** Values that grant nothing (unknown role, malformed, `system` while not allowed). */
  ignored: string[];
}

/**
 * The claim's values: a JSON array of strings, or one string of values separated by spaces or
 * commas. A group's full path (`/admin@acme`, `/ecs/admin@acme`: Keycloak's group membership
 * mapper by default) counts as its last segment, the group's name; an organization id holds no `/`.
 */
function values(claim: unknown): string[] {
  const raw = typeof claim === 'string' ? claim.split(/[\s,]+/) : Array.isArray(claim) ? claim.map((v) => (typeof v === 'string' ? v.trim() : JSON.stringify(v))) : [];
  return raw.filter(Boolean).map((v) => (v.startsWith('/') ? v.slice(v.lastIndexOf('/') + 1) || v : v));
}

/** Maps the roles claim to grants, in the order given, without duplicates. */
export function grantsFromClaim(claim: unknown, opts: { allowSystem: boolean }): ClaimGrants {
  const grants: Grant[] = [];
  const ignored: string[] = [];
  const seen = new Set<string>();
  const add = (g: Grant): void => {
    const key = `${g.role}@${g.orgId ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    grants.push(g);
  };
  for (const v of values(claim)) {
    if (v === 'system' || v.startsWith('system@')) {
      if (opts.allowSystem) add({ role: 'system' });
      else ignored.push(v);
      continue;
    }
    const at = v.indexOf('@');
    const role = at > 0 ? v.slice(0, at) : '';
    const orgId = at > 0 ? v.slice(at + 1) : '';
    if ((role === 'admin' || role === 'reader') && ORG_ID.test(orgId)) add({ role, orgId });
    else ignored.push(v);
  }
  return { grants, ignored };
}
