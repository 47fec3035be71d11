/**
 * What one principal may reach: `Access`, judged against the organization tree (`OrgTree`).
 * Every service asks it; nothing else decides 403.
 */
import type { estypes } from '@elastic/elasticsearch';
import { ForbiddenError } from '../errors.js';
import type { UserKey } from '../domain.js';
import type { Principal, Role } from './principal.js';

/** An Elasticsearch query; the org filters below are handed to the stores as they are. */
type Query = estypes.QueryDslQueryContainer;

export interface OrgTree {
  exists(orgId: string): Promise<boolean>;
  /** True when `orgId` is `rootId` or below it. */
  isWithin(orgId: string, rootId: string): Promise<boolean>;
  /**
   * A query matching the records of the org and every organization below it, whose organization
   * is in `orgField`: one term on the ancestry beside it, whatever the subtree's size, plus one
   * term while an organization move is rewriting records (docs/adr/0087-reads-during-an-organization-move.md).
   */
  subtreeQuery(orgId: string, orgField: string): Promise<Query>;
}

/** Matches no record (a restricted principal without an organization). */
const MATCH_NONE: Query = { match_none: {} };

/**
 * What one principal may reach. Every service asks this object; nothing else decides 403.
 *
 * A person may hold several grants; an operation is judged by the grants whose role the route
 * admits (`admitted`), and a target by the grants whose subtree holds it: a person who is
 * admin of one customer and reader of another may write to the first and only read the second.
 */
export class Access {
  /** The organizations whose subtrees this request may reach (undefined: unrestricted). */
  private readonly roots: readonly string[] | undefined;

  constructor(
    readonly principal: Principal,
    private readonly orgs: OrgTree,
    /** The roles the operation admits (besides `system`); unset: every grant counts. */
    admitted?: readonly Role[],
  ) {
    const p = principal;
    if (p.role === 'anonymous' || (!p.grants && p.role === 'system')) this.roots = undefined;
    else if (!p.grants) this.roots = p.orgId ? [p.orgId] : [];
    else {
      const counted = p.grants.filter((g) => g.role === 'system' || !admitted || admitted.includes(g.role));
      this.roots = counted.some((g) => g.role === 'system')
        ? undefined
        : [...new Set(counted.flatMap((g) => (g.orgId ? [g.orgId] : [])))];
    }
  }

  get role(): Principal['role'] {
    return this.principal.role;
  }

  /** System tokens and perimeter callers of unsecured operations are not limited to a subtree. */
  get unrestricted(): boolean {
    return this.roots === undefined;
  }

  /** The organizations whose subtrees this request may reach (undefined: unrestricted). */
  get grantRoots(): readonly string[] | undefined {
    return this.roots;
  }

  /** The UserKey stamped on records this principal writes. */
  get userKey(): UserKey {
    const { tokenId, person } = this.principal;
    return {
      username: person?.email ?? this.principal.name,
      authenticator: tokenId ? `token:${tokenId}` : person ? `oidc:${person.subject}` : 'none',
    };
  }

  /**
   * 403 unless the org is within the principal's subtree. The message never names the org:
   * it is often the org of a stored record the caller found by another key (API3).
   */
  async assertOrg(orgId: string): Promise<void> {
    if (!this.roots) return;
    for (const root of this.roots) if (await this.orgs.isWithin(orgId, root)) return;
    throw new ForbiddenError(
      this.principal.person
        ? 'the record or organization is outside the organizations your grants cover for this operation'
        : "the record or organization is outside the token's organization subtree",
    );
  }

  /** 403 unless the principal may see a record of this org; an agent only its own endpoint. */
  async assertEndpoint(endpointId: string, orgId: string): Promise<void> {
    if (this.principal.role === 'agent' && this.principal.endpointId !== endpointId) {
      throw new ForbiddenError('an agent token may act only on its own endpoint');
    }
    await this.assertOrg(orgId);
  }

  /** 403 for agent tokens acting on an endpoint other than their own (no store access needed). */
  assertAgentSelf(endpointId: string): void {
    if (this.principal.role === 'agent' && this.principal.endpointId !== endpointId) {
      throw new ForbiddenError('an agent token may act only on its own endpoint');
    }
  }

  /** True when the principal may see the records of `orgId` (a subtree it holds; every org when unrestricted). */
  async covers(orgId: string): Promise<boolean> {
    if (!this.roots) return true;
    for (const root of this.roots) if (await this.orgs.isWithin(orgId, root)) return true;
    return false;
  }

  /**
   * A filter limiting a search to the principal's subtree (undefined when unrestricted), on
   * records whose organization is in `field`; an agent sees only its own endpoint's records.
   */
  async orgFilter(field = 'orgId', endpointField?: string): Promise<Query | undefined> {
    if (this.principal.role === 'agent' && endpointField) {
      return { term: { [endpointField]: this.principal.endpointId ?? '' } };
    }
    if (!this.roots) return undefined;
    if (this.roots.length === 0) return MATCH_NONE;
    // One term per grant (a person may hold a few), never one per organization of a subtree.
    const subtrees = await Promise.all(this.roots.map((root) => this.orgs.subtreeQuery(root, field)));
    return subtrees.length === 1 ? subtrees[0] : { bool: { should: subtrees, minimum_should_match: 1 } };
  }

  /**
   * The scope a criteria names on records whose organization is in `field`: the org, or its
   * subtree when asked; the principal's subtree when it names none. An org outside the
   * principal's subtree → 403. Undefined: no limit (an unrestricted caller naming no org).
   */
  async resolveScope(orgId: string | undefined, includeChildren: boolean, field = 'orgId'): Promise<Query | undefined> {
    if (orgId === undefined) return this.orgFilter(field);
    await this.assertOrg(orgId);
    return includeChildren ? this.orgs.subtreeQuery(orgId, field) : { term: { [field]: orgId } };
  }
}
