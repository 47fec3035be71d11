/**
 * A write's own token (docs/adr/0125-conditional-writes-recognise-themselves.md). Elasticsearch
 * can apply a conditional or create-only write and still answer it 409: after a node failure it
 * re-sends a replicated write, and the re-send meets the write it repeats. Such a write adds a
 * random id to the document's `writeIds` (the last few writes' ids, carried over from the read
 * the write is conditional on), and a conflict is read back: a document holding that id was
 * written by this write — no rival writes the same id — even when a later writer has changed it
 * since. An index takes part when its template maps the field (kept in `_source` only, never
 * shown in a record).
 */
import crypto from 'node:crypto';
import { ServiceUnavailableError } from '../errors.js';
import { loadTemplates } from './indices.js';

export const WRITE_IDS = 'writeIds';
/** Ids kept per document: enough for the writers that can follow a write before its re-send is answered. */
const KEPT = 8;

let carrying: Set<string> | undefined;

/** True when the logical index's template maps `writeIds`: its conditional and create-only writes carry one. */
export function carriesWriteIds(logicalIndex: string): boolean {
  carrying ??= new Set(loadTemplates().filter((t) => t.template.mappings.properties?.[WRITE_IDS] !== undefined).map((t) => t.name));
  return carrying.has(logicalIndex);
}

/** A fresh id for one write. */
export function newWriteId(): string {
  return crypto.randomUUID();
}

/** `doc` with the write's id after the ids of the writes before it, when there is one. */
export function withWriteId<D>(doc: D, writeId: string | undefined, prior: string[] | undefined): D {
  return writeId === undefined ? doc : { ...doc, [WRITE_IDS]: [...(prior ?? []), writeId].slice(-KEPT) };
}

/** Takes the ids out of a read document (in place: the document is the caller's own copy). */
export function takeWriteIds(doc: object | undefined): string[] | undefined {
  // A hit read without its source (`_source: false`) has no document.
  if (typeof doc !== 'object' || doc === null || !(WRITE_IDS in doc)) return undefined;
  const ids = (doc as Record<string, unknown>)[WRITE_IDS];
  delete (doc as Record<string, unknown>)[WRITE_IDS];
  return Array.isArray(ids) ? (ids as string[]) : undefined;
}

/** The write's answer; after a conflict (`isConflict`), what `landed` finds of this write instead, or the conflict. */
export async function unlessLanded<R, S>(write: () => Promise<R>, isConflict: (err: unknown) => boolean, landed: () => Promise<S | undefined>): Promise<R | S> {
  try {
    return await write();
  } catch (err) {
    const mine = isConflict(err) ? await landed() : undefined;
    if (mine === undefined) throw err;
    return mine;
  }
}

/**
 * What a conflicted write's read-back says of it: the document as it wrote it (its id is the
 * last), or nothing (no id of its own: the conflict stands). A write whose id a later write
 * carried on did land, but its own version is gone: the answer is 503 (read the record again),
 * never a later writer's version, which would let the caller overwrite a change it never saw.
 */
export function landedAs<S extends { writeIds?: string[] }>(hit: S | undefined, writeId: string, noun: string): S | undefined {
  const ids = hit?.writeIds ?? [];
  if (ids[ids.length - 1] === writeId) return hit;
  if (ids.includes(writeId)) throw new ServiceUnavailableError(`the ${noun} was written and has changed since; read it again`, 1);
  return undefined;
}
