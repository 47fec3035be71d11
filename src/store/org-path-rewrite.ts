/**
 * Rewrites the ancestry (`orgPath`) of org-scoped records: after an organization moves, and to
 * stamp records written before records carried it (docs/adr/0086-organization-move-task.md).
 * The distribution has neither update-by-query nor scripting, so this is a point-in-time scan
 * of the records a query selects plus bulk partial updates, each conditional on the seq_no it
 * read: a record changed meanwhile is left to its writer (who stamped the path it knew) and to
 * the next pass. Every pass selects only records still wrong, so a pass interrupted anywhere
 * (a crash, a restart) resumes by running again; nothing is kept but the query.
 */
import type { estypes } from '@elastic/elasticsearch';
import { aliasName, readRetries, type StoreContext } from './client.js';
import { storeCall } from './errors.js';
import { pitPages } from './pit.js';
import { itemError } from './item-errors.js';
import { orgOf, pathsOf, withPath, type OrgPathFields } from './org-path.js';

type Query = estypes.QueryDslQueryContainer;

/** Picks, per org-scoped index, the records whose ancestry is to be (re)written. */
export type StaleSelector = (f: OrgPathFields) => Query;

/** Records that carry no ancestry yet (written before records carried it). */
export const unstamped: StaleSelector = (f) => ({ bool: { filter: [{ exists: { field: f.org } }], must_not: [{ exists: { field: f.path } }] } });

/**
 * Records below `orgId` whose ancestry still shows its place before a move from `from` to `to`
 * (each the ids from the root down to the parent). A record is right when the ids before `orgId`
 * in its path are `to`; a stale one has `from` there instead, so it lacks the new parent or holds
 * an id of `from` that `to` does not: two terms at most, however big the subtree.
 */
export function movedAway(orgId: string, from: string[], to: string[]): StaleSelector {
  const gone = from.filter((id) => !to.includes(id));
  const newParent = to[to.length - 1];
  return (f) => ({
    bool: {
      filter: [{ term: { [f.path]: orgId } }],
      should: [
        ...(newParent !== undefined ? [{ bool: { must_not: [{ term: { [f.path]: newParent } }] } }] : []),
        ...(gone.length > 0 ? [{ terms: { [f.path]: gone } }] : []),
      ],
      minimum_should_match: 1,
    },
  });
}

/**
 * How many records `select` picks in every org-scoped index. `refresh`: after a refresh, so the
 * count is exact and the rewritten records are searchable (background work and tools only; a
 * request's count may lag by the refresh interval).
 */
export async function countStale(ctx: StoreContext, select: StaleSelector, opts: { refresh?: boolean } = {}): Promise<number> {
  let n = 0;
  for (const [logical, f] of Object.entries(ctx.orgScoped ?? {})) {
    const index = aliasName(ctx.prefix, logical);
    if (opts.refresh) await storeCall(() => ctx.client.indices.refresh({ index, ignore_unavailable: true }));
    const res = await storeCall(() => ctx.client.count({ index, query: select(f), ignore_unavailable: true }, readRetries));
    n += res.count;
  }
  return n;
}

/**
 * One pass over every org-scoped index: each record `select` picks gets the ancestry of its
 * organization as the store context's tree knows it now. Returns the records rewritten;
 * `onBatch` hears the running total after every bulk.
 */
export async function rewriteOrgPaths(
  ctx: StoreContext,
  select: StaleSelector,
  opts: { batchSize?: number; onBatch?: (rewritten: number) => Promise<void> | void } = {},
): Promise<number> {
  const ancestry = ctx.ancestry;
  if (!ancestry) throw new Error('rewriting organization paths needs the organization tree (StoreContext.ancestry)');
  let rewritten = 0;
  for (const [logical, f] of Object.entries(ctx.orgScoped ?? {})) {
    const index = aliasName(ctx.prefix, logical);
    // Updates made by an earlier pass must be searchable, or this pass would pick them again.
    await storeCall(() => ctx.client.indices.refresh({ index, ignore_unavailable: true }));
    const pages = pitPages<Record<string, unknown>>(ctx.client, {
      index,
      query: select(f),
      size: opts.batchSize ?? 1000,
      params: { seq_no_primary_term: true, _source: [f.org] },
      requestOptions: readRetries,
      call: storeCall,
    });
    for await (const hits of pages) {
      const orgs = new Map<string, string>();
      for (const h of hits) {
        const org = orgOf(h._source, f);
        if (org !== undefined) orgs.set(h._id as string, org);
      }
      const paths = await pathsOf(ancestry, orgs.values());
      const operations = hits.flatMap((h) => {
        const org = orgs.get(h._id as string);
        if (org === undefined) return [];
        return [
          { update: { _index: h._index, _id: h._id as string, if_seq_no: h._seq_no, if_primary_term: h._primary_term } },
          { doc: withPath({}, f, paths.get(org) ?? [org]) },
        ];
      });
      if (operations.length === 0) continue;
      const res = await storeCall(() => ctx.client.bulk({ operations }));
      for (const item of res.items) {
        const r = item.update;
        if (!r) continue;
        if (r.status >= 200 && r.status < 300) rewritten++;
        // 409: changed since the scan read it (its writer stamped it; the next pass checks); 404: deleted.
        else if (r.status !== 409 && r.status !== 404) throw itemError(r.status, r.error);
      }
      await opts.onBatch?.(rewritten);
    }
  }
  return rewritten;
}
