/**
 * Organization ancestry on org-scoped records (docs/adr/0085-organization-ancestry-on-records.md).
 * A record of organization O carries `orgPath`: the ids from O's root down to O itself, so the
 * records of a subtree are the ones whose `orgPath` holds the subtree's root — one term, whatever
 * the subtree's size. The store stamps it on every write that sets the organization field and
 * strips it from every record it reads: it is an index detail, never part of a response.
 */
import type { estypes } from '@elastic/elasticsearch';

/** Where an index keeps the organization of its records and their ancestry. */
export interface OrgPathFields {
  /** The organization id (a dotted path for nested fields, e.g. `target.orgId`). */
  org: string;
  /** The ancestry keyword array beside it. */
  path: string;
}

/** The path field beside an organization field (`orgId` → `orgPath`, `target.orgId` → `target.orgPath`). */
export function pathFieldOf(orgField: string): string {
  return orgField.replace(/orgId$/, 'orgPath');
}

/** The fields of an index whose records keep their organization in `orgField`, the ancestry beside it. */
export function orgPathFields(orgField: string): OrgPathFields {
  return { org: orgField, path: pathFieldOf(orgField) };
}

/** An org-scoped index, as its store declares it: its logical name and where its records keep their organization. */
export interface OrgScopedIndex {
  index: string;
  orgField: string;
}

/** Answers an organization's ancestry (the organization tree, injected into the store context). */
export interface OrgAncestry {
  /** Ids from the org's root down to the org itself; an org the tree does not know: itself alone. */
  pathOf(orgId: string): Promise<string[]>;
}

type Obj = Record<string, unknown>;

function parentOf(doc: Obj, dotted: string): { holder: Obj | undefined; key: string } {
  const parts = dotted.split('.');
  let cur: unknown = doc;
  for (const p of parts.slice(0, -1)) {
    cur = cur && typeof cur === 'object' ? (cur as Obj)[p] : undefined;
  }
  return { holder: cur && typeof cur === 'object' ? (cur as Obj) : undefined, key: parts[parts.length - 1] };
}

/** The organization a document (or partial document) names, if it names one. */
export function orgOf(doc: unknown, f: OrgPathFields): string | undefined {
  if (!doc || typeof doc !== 'object') return undefined;
  const { holder, key } = parentOf(doc as Obj, f.org);
  const v = holder?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** A copy of `doc` with the ancestry of its organization set (the caller's object is left alone). */
export function withPath<D>(doc: D, f: OrgPathFields, path: string[]): D {
  const copy = { ...(doc as Obj) };
  const parts = f.path.split('.');
  let cur = copy;
  for (const p of parts.slice(0, -1)) {
    cur[p] = { ...(cur[p] as Obj) };
    cur = cur[p] as Obj;
  }
  cur[parts[parts.length - 1]] = path;
  return copy as D;
}

/**
 * Hides the ancestry of a document read from the store (in place): the field is set to
 * undefined, which every JSON answer leaves out. Deleting it instead turns each parsed document
 * into a dictionary-mode object: a page of 20 records took 130 µs to parse, strip and serialise
 * that way against 103 µs (docs/adr/0141-reads-shaped-where-they-cost-least.md).
 */
export function stripPath(doc: unknown, f: OrgPathFields): void {
  if (!doc || typeof doc !== 'object') return;
  if (f.path === TOP_LEVEL_PATH) {
    if ((doc as Obj)[TOP_LEVEL_PATH] !== undefined) (doc as Obj)[TOP_LEVEL_PATH] = undefined;
    return;
  }
  const { holder, key } = parentOf(doc as Obj, f.path);
  if (holder && holder[key] !== undefined) holder[key] = undefined;
}

/** The ancestry field of the indices whose records keep their organization in `orgId`. */
const TOP_LEVEL_PATH = 'orgPath';

/** The ancestries of several organizations, each resolved once. */
export async function pathsOf(ancestry: OrgAncestry, orgIds: Iterable<string>): Promise<Map<string, string[]>> {
  const unique = [...new Set(orgIds)];
  const paths = await Promise.all(unique.map((o) => ancestry.pathOf(o)));
  return new Map(unique.map((o, i) => [o, paths[i]]));
}

/** Bulk operations with the ancestry stamped on every source (index, create) and partial document (update) naming an organization. */
export async function stampBulk(
  ops: estypes.BulkRequest['operations'],
  f: OrgPathFields,
  ancestry: OrgAncestry,
): Promise<estypes.BulkRequest['operations']> {
  if (!ops) return ops;
  type Update = { doc?: unknown; upsert?: unknown };
  const bodies: { at: number; kind: 'source' | 'update' }[] = [];
  const orgs: string[] = [];
  for (let i = 0; i < ops.length; i++) {
    const action = ops[i] as Record<string, unknown>;
    if ('delete' in action) continue;
    const kind = 'update' in action ? 'update' : 'source';
    const body = ops[i + 1];
    i++;
    const named = kind === 'update' ? [orgOf((body as Update).doc, f), orgOf((body as Update).upsert, f)] : [orgOf(body, f)];
    const present = named.filter((o): o is string => o !== undefined);
    if (present.length === 0) continue;
    orgs.push(...present);
    bodies.push({ at: i, kind });
  }
  if (bodies.length === 0) return ops;
  const paths = await pathsOf(ancestry, orgs);
  const out = [...ops];
  const stampOne = (d: unknown): unknown => {
    const o = orgOf(d, f);
    return o === undefined ? d : withPath(d, f, paths.get(o) ?? [o]);
  };
  for (const b of bodies) {
    const body = out[b.at];
    if (b.kind === 'source') out[b.at] = stampOne(body) as (typeof out)[number];
    else {
      const u = body as Update;
      out[b.at] = { ...u, ...(u.doc !== undefined ? { doc: stampOne(u.doc) } : {}), ...(u.upsert !== undefined ? { upsert: stampOne(u.upsert) } : {}) } as (typeof out)[number];
    }
  }
  return out;
}
