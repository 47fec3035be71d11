/**
 * The scope the analyst picked (an organization, with or without its children) translated into
 * each operation's own criteria. The spec's operations differ: UTM and LTE searches take
 * `includeChildren`; agent searches and license counts take one `orgId` (no children) or none
 * (every organization the token sees); the host-info report takes a list of orgIds.
 */
export interface Scope {
  orgId: string;
  includeChildren: boolean;
  /** The selected organization and every one below it (from the tree). */
  subtree: string[];
  /** True when the selection is everything the token sees (its own root, with children). */
  coversAll: boolean;
}

/** The `orgId` for operations without includeChildren: none when the scope is everything visible. */
export function singleOrg(scope: Scope): string | undefined {
  return scope.coversAll ? undefined : scope.orgId;
}

/** The orgIds for the host-info report ([] = every organization visible to the token). */
export function orgIdList(scope: Scope): string[] {
  if (scope.coversAll) return [];
  return scope.includeChildren ? scope.subtree.slice(0, 1000) : [scope.orgId];
}

/** True when an operation without includeChildren cannot cover the scope exactly. */
export function narrowedToOneOrg(scope: Scope): boolean {
  return scope.includeChildren && !scope.coversAll && scope.subtree.length > 1;
}
