/**
 * Presence: every sign of life of an endpoint stamps `lastSeen` through the group
 * commit of connection bookkeeping, and a CONNECTED endpoint not seen for its organization's
 * presence timeout reads as POTENTIALLY_DISCONNECTED. Nothing rewrites documents: the status
 * is decided when a record is read (`apply`) and inside every query that filters, counts or
 * aggregates by status (`PresenceView.stale`, range queries only: the distribution has no
 * scripting). See docs/adr/0039-presence-decided-on-read.md.
 *
 * A record without `lastSeen` (written before presence existed, or never seen since) keeps its
 * stored status: presence starts with its first sign of life.
 */
import type { Access } from '../../access/access.js';
import { ForbiddenError, NotFoundError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { RecentMap } from '../../recent-map.js';
import type { Query } from '../../store/doc-store.js';
import { CONNECTION_STATUSES, type ConnectionStatus, type EndpointDoc, type PresenceView } from './model.js';
import type { EndpointStore } from './store.js';

/** Where per-organization presence timeouts come from (the org-agent-config service). */
export interface PresenceTimeoutSource {
  /** Organizations whose agent configuration overrides the presence timeout → seconds. */
  presenceTimeouts(): Promise<ReadonlyMap<string, number>>;
}

export interface PresenceOptions {
  /** ECS_PRESENCE_TIMEOUT (seconds). */
  defaultTimeoutSeconds: number;
  /** The clock (tests may inject one); epoch ms. */
  now?: () => number;
  /** Where a sign of life beside another operation says it was not written. */
  log?: Logger;
}

export type { PresenceView };

/** The connection-status filter of a criterion (`connectionStatuses`), presence applied. */
export function connectionStatusFilter(statuses: readonly ConnectionStatus[] | undefined, view: PresenceView | undefined): Query[] {
  if (!statuses || statuses.length === 0) return [];
  if (!view) return [{ terms: { connectionStatus: [...statuses] } }];
  const wantConnected = statuses.includes('CONNECTED');
  const wantPotential = statuses.includes('POTENTIALLY_DISCONNECTED');
  // Both: every stored CONNECTED or POTENTIALLY_DISCONNECTED matches either way.
  if (wantConnected && wantPotential) return [{ terms: { connectionStatus: [...statuses] } }];
  const should: Query[] = [];
  const plain = statuses.filter((s) => s !== 'CONNECTED');
  if (plain.length > 0) should.push({ terms: { connectionStatus: plain } });
  if (wantConnected) should.push(liveConnected(view));
  if (wantPotential) should.push(view.stale);
  return [{ bool: { should, minimum_should_match: 1 } }];
}

/** Stored CONNECTED and not stale. */
export function liveConnected(view: PresenceView | undefined): Query {
  if (!view) return { term: { connectionStatus: 'CONNECTED' } };
  return { bool: { filter: [{ term: { connectionStatus: 'CONNECTED' } }], must_not: [view.stale] } };
}

/** One filter per ConnectionStatus, presence applied (a `filters` aggregation's buckets). */
export function connectionStatusBuckets(view: PresenceView): Record<ConnectionStatus, Query> {
  return Object.fromEntries(
    CONNECTION_STATUSES.map((s) => [s, { bool: { filter: connectionStatusFilter([s], view) } }]),
  ) as Record<ConnectionStatus, Query>;
}

/**
 * The stale filter for a set of overrides: a range on lastSeen per distinct timeout for the
 * few organizations that override it, and the default range for every other organization.
 */
export function staleQuery(nowMs: number, defaultSeconds: number, overrides: ReadonlyMap<string, number>): Query {
  const byTimeout = new Map<number, string[]>();
  for (const [org, seconds] of overrides) {
    if (seconds === defaultSeconds) continue;
    byTimeout.set(seconds, [...(byTimeout.get(seconds) ?? []), org]);
  }
  const before = (seconds: number): Query => ({ range: { lastSeen: { lt: new Date(nowMs - seconds * 1000).toISOString() } } });
  const overridden = [...byTimeout.values()].flat();
  const should: Query[] = [
    overridden.length === 0
      ? before(defaultSeconds)
      : { bool: { filter: [before(defaultSeconds)], must_not: [{ terms: { orgId: overridden } }] } },
    ...[...byTimeout].map(([seconds, orgs]): Query => ({ bool: { filter: [{ terms: { orgId: orgs } }, before(seconds)] } })),
  ];
  return {
    bool: {
      filter: [{ term: { connectionStatus: 'CONNECTED' } }],
      should,
      minimum_should_match: 1,
    },
  };
}

/**
 * A sign of life that comes within this share of the shortest presence timeout after the last
 * stamp of the same endpoint through this instance is not written again (at most a minute):
 * every stamp rewrites the endpoint document in Lucene, and a chatty agent's reports would
 * otherwise each cost one. Bookkeeping writes (connect, disconnect…) always stamp.
 */
const STAMP_WINDOW_SHARE = 0.1;
const MAX_STAMP_WINDOW_MS = 60_000;
/**
 * Endpoints whose last stamp this instance remembers: every agent it holds (100,000 and more),
 * the oldest stamps let go first and one at a time, stale ones as they pass the window.
 */
const MAX_REMEMBERED_STAMPS = 200_000;

/** Elasticsearch's document id limit (endpoint ids are within it). */
const MAX_ENDPOINT_ID_BYTES = 512;

/**
 * How long the per-organization overrides are reused before they are read again (one small
 * search of the org-agent-configs index; a change through this instance applies at once).
 */
const OVERRIDES_TTL_MS = 5_000;

export class EndpointPresence {
  private overrides: ReadonlyMap<string, number> = new Map();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  /** Bumped by invalidate(): a read that started before it does not count as fresh. */
  private generation = 0;
  /** Endpoint id → when this instance last stamped it (epoch ms). */
  private readonly stamped = new RecentMap<string, number>(MAX_REMEMBERED_STAMPS);
  readonly now: () => number;

  constructor(
    private readonly store: EndpointStore,
    private readonly opts: PresenceOptions,
    private source?: PresenceTimeoutSource,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Set once the org-agent-config service exists (it is built after the endpoints). */
  useTimeouts(source: PresenceTimeoutSource): void {
    this.source = source;
    this.loadedAt = Number.NEGATIVE_INFINITY;
  }

  /** Forgets the overrides read (an organization's agent configuration changed). */
  invalidate(): void {
    this.generation += 1;
    this.loadedAt = Number.NEGATIVE_INFINITY;
    this.refreshSoon();
  }

  /** The presence timeout of an organization, in seconds (from the last overrides read). */
  timeoutSeconds(orgId: string): number {
    return this.overrides.get(orgId) ?? this.opts.defaultTimeoutSeconds;
  }

  /** The status a stored document reads as now. */
  effectiveStatus(doc: Pick<EndpointDoc, 'connectionStatus' | 'lastSeen' | 'orgId'>): ConnectionStatus | undefined {
    if (doc.connectionStatus !== 'CONNECTED' || !doc.lastSeen) return doc.connectionStatus;
    // Between two reads of the overrides, a record reads with the ones known (a get never waits on them).
    this.refreshSoon();
    const seen = Date.parse(doc.lastSeen);
    return this.now() - seen > this.timeoutSeconds(doc.orgId) * 1000 ? 'POTENTIALLY_DISCONNECTED' : 'CONNECTED';
  }

  /** Applies presence to a document in place (the store's read mapping). */
  apply<D extends Pick<EndpointDoc, 'connectionStatus' | 'lastSeen' | 'orgId'>>(doc: D): D {
    if (doc.connectionStatus === 'CONNECTED' && doc.lastSeen) doc.connectionStatus = this.effectiveStatus(doc);
    return doc;
  }

  /**
   * What a query needs: the time and the stale filter with the overrides known. A query never
   * waits for the overrides to be read (a slow store would hold every page search behind one
   * read): they are read at start-up (`refresh`, before the service is ready) and then in the
   * background, at most every few seconds.
   */
  async view(): Promise<PresenceView> {
    this.refreshSoon();
    return new StaleView(this.now(), this.opts.defaultTimeoutSeconds, this.overrides);
  }

  /** Reads the overrides now (once at a time); a failed read keeps the known ones and is retried later. */
  refresh(): Promise<void> {
    if (!this.source) return Promise.resolve();
    const source = this.source;
    const generation = this.generation;
    this.loading ??= source
      .presenceTimeouts()
      .then((o) => {
        this.overrides = o;
        if (generation === this.generation) this.loadedAt = this.now();
      })
      .catch(() => undefined)
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /**
   * A sign of life: stamps lastSeen through the group commit of connection bookkeeping (one
   * bulk item, no round trip of its own when the service is busy). An unrestricted caller or
   * the endpoint's own agent stamps directly; another caller only an endpoint it may see
   * (one multi-get item first). An unknown, deleted or invisible endpoint is not stamped and
   * is no error: the operation that carried the sign of life has its own checks.
   */
  async seen(endpointId: string, access: Access): Promise<void> {
    // A heartbeat may name any sensor id; one beyond the document id limit is no endpoint's.
    if (Buffer.byteLength(endpointId, 'utf8') > MAX_ENDPOINT_ID_BYTES) return;
    if (this.recentlyStamped(endpointId)) return;
    try {
      if (!access.unrestricted && !(access.role === 'agent' && access.principal.endpointId === endpointId)) {
        const hit = await this.store.get(endpointId);
        if (!hit || hit.doc.deleted) return;
        await access.assertEndpoint(hit.id, hit.doc.orgId);
      }
      await this.stamp(endpointId);
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof ForbiddenError) return;
      throw err;
    }
  }

  /** Stamps an endpoint the caller has already been authorized for (no read). */
  async seenAuthorized(endpointId: string): Promise<void> {
    if (this.recentlyStamped(endpointId)) return;
    try {
      await this.stamp(endpointId);
    } catch (err) {
      if (err instanceof NotFoundError) return;
      throw err;
    }
  }

  /**
   * A sign of life beside another operation, never that operation's outcome: a refused stamp (the
   * endpoints index blocked for a reindex's swap, say) is logged and dropped, and not remembered
   * as written, so the endpoint's next sign of life writes it (docs/adr/0133-a-move-is-not-its-sign-of-life.md).
   */
  async seenBeside(endpointId: string): Promise<void> {
    try {
      await this.seenAuthorized(endpointId);
    } catch (err) {
      this.opts.log?.debug({ err: { message: (err as Error).message }, endpointId }, 'sign of life not written');
    }
  }

  /** The window within which a second sign of life is not written (see STAMP_WINDOW_SHARE). */
  stampWindowMs(): number {
    const shortest = Math.min(this.opts.defaultTimeoutSeconds, ...this.overrides.values());
    return Math.min(MAX_STAMP_WINDOW_MS, shortest * 1000 * STAMP_WINDOW_SHARE);
  }

  private recentlyStamped(endpointId: string): boolean {
    const last = this.stamped.get(endpointId);
    return last !== undefined && this.now() - last < this.stampWindowMs();
  }

  private async stamp(endpointId: string): Promise<void> {
    await this.store.touch(endpointId);
    const now = this.now();
    const windowMs = this.stampWindowMs();
    this.stamped.dropOldestWhile((at) => now - at >= windowMs);
    this.stamped.set(endpointId, now);
  }

  private refreshSoon(): void {
    if (this.source && !this.loading && this.now() - this.loadedAt >= OVERRIDES_TTL_MS) void this.refresh();
  }
}

/**
 * Endpoints per connection status (presence applied), in one search with a `filters`
 * aggregation; statuses nobody has are left out (as the other aggregations leave out absent values).
 */
export async function countByConnectionStatus(
  store: EndpointStore,
  query: Query,
  view: PresenceView,
): Promise<{ key: ConnectionStatus; count: number }[]> {
  const counts = await store.filterCounts(query, connectionStatusBuckets(view));
  return CONNECTION_STATUSES.map((key) => ({ key, count: counts[key] })).filter((b) => b.count > 0);
}

/**
 * A query's presence view; the stale filter is built only when a criterion uses it (most searches
 * filter on no connection status). A class, not a literal with its own accessor, which would be a
 * dictionary-mode object per search (docs/adr/0154-no-accessor-of-its-own-on-a-request-object.md).
 */
class StaleView implements PresenceView {
  private built: Query | undefined;

  constructor(
    readonly nowMs: number,
    private readonly defaultTimeoutSeconds: number,
    private readonly overrides: ReadonlyMap<string, number>,
  ) {}

  get stale(): Query {
    this.built ??= staleQuery(this.nowMs, this.defaultTimeoutSeconds, this.overrides);
    return this.built;
  }
}
