/**
 * Gives records written before org-scoped records carried their organization's ancestry the
 * ancestry of their organization (docs/adr/0085): every instance's `AncestryKeeper` runs it
 * in the background, the ops command `org-paths` at once. Idempotent and resumable: each pass selects only the
 * records still without ancestry.
 */
import type { Logger } from '../../log.js';
import { Periodic } from '../../periodic.js';
import type { StoreContext } from '../../store/client.js';
import type { LeaseStore } from '../../store/lease.js';
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

const LEASE = 'org-paths';

/**
 * Stamps, in the background of every instance of this release, the records an older release
 * still writes without ancestry during a rolling upgrade (docs/adr/0088-ancestry-stamped-in-the-background.md):
 * every `everyMs` each instance counts them (one count per org-scoped index); when there are
 * some, the instance holding the `org-paths` lease stamps them. `ops org-paths` does the same at once.
 */
export class AncestryKeeper {
  private readonly periodic: Periodic;

  constructor(
    private readonly ctx: StoreContext,
    private readonly lease: LeaseStore,
    private readonly opts: { everyMs: number; holder: string },
    private readonly log: Logger,
  ) {
    this.periodic = new Periodic('stamping of organization ancestry', opts.everyMs, () => this.run(), log);
  }

  /** One check: how many records it stamped (0 when none lacked ancestry or another instance holds the lease). */
  async run(): Promise<number> {
    const found = await unstampedCount(this.ctx);
    if (found === 0) return 0;
    // A long stamping outlives a short lease: another instance may then join in, which is harmless (each write is conditional).
    if (!(await this.lease.acquire(LEASE, this.opts.holder, Math.max(10 * 60_000, 3 * this.opts.everyMs), new Date()))) return 0;
    try {
      const started = Date.now();
      const stamped = await stampAncestry(this.ctx);
      this.log.info(
        { records: found, stamped, elapsedMs: Date.now() - started },
        `org paths: ${stamped} records written without their organization's ancestry (by an older release) were stamped`,
      );
      return stamped;
    } finally {
      await this.lease.release(LEASE, this.opts.holder).catch(() => undefined);
    }
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }
}
