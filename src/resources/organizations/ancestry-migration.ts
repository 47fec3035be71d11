/**
 * Gives records written before org-scoped records carried their organization's ancestry the
 * ancestry of their organization (docs/adr/0085): the ops command `org-paths` runs it, the
 * start-up checks count what it would do. Idempotent and resumable: each pass selects only the
 * records still without ancestry.
 */
import type { StoreContext } from '../../store/client.js';
import { countStale, rewriteOrgPaths, unstamped } from '../../store/org-path-rewrite.js';

/** Org-scoped records without ancestry (`refresh`: exact, after a refresh; tools only). */
export function unstampedCount(ctx: StoreContext, opts: { refresh?: boolean } = {}): Promise<number> {
  return countStale(ctx, unstamped, opts);
}

/** Stamps the ancestry on every org-scoped record without one; returns how many were stamped. */
export async function stampAncestry(ctx: StoreContext, onBatch?: (stamped: number) => void): Promise<number> {
  let total = 0;
  // A second pass picks up records a concurrent writer changed between the scan and the bulk (skipped, 409).
  for (let pass = 0; pass < 5; pass++) {
    const before = total;
    total += await rewriteOrgPaths(ctx, unstamped, { onBatch: (n) => onBatch?.(before + n) });
    if (total === before || (await unstampedCount(ctx, { refresh: true })) === 0) break;
  }
  return total;
}
