/**
 * Record versions (spec section 9) ↔ Elasticsearch document versions, in one place.
 * A SeqNoPrimaryTerm version is the document's `_seq_no`/`_primary_term`; an integer
 * version is its `_version`.
 */
import { ConflictError } from '../errors.js';

export interface SeqNoPrimaryTerm {
  sequenceNumber: number;
  primaryTerm: number;
}

export interface DocVersion {
  seqNo: number;
  primaryTerm: number;
  version: number;
}

export function toSeqNoPrimaryTerm(v: DocVersion): SeqNoPrimaryTerm {
  return { sequenceNumber: v.seqNo, primaryTerm: v.primaryTerm };
}

/** The version of a document as Elasticsearch answers it (get, search hit, write response). */
export function versionOf(r: { _seq_no?: number; _primary_term?: number; _version?: number }): DocVersion {
  return { seqNo: r._seq_no ?? -1, primaryTerm: r._primary_term ?? 0, version: r._version ?? 0 };
}

/**
 * For integer versions: the client's version must equal the stored `_version`. Returns the
 * concurrency parameters of the read so the following write is also atomic against writers
 * that arrive between the read and the write.
 */
export function checkIntegerVersion(
  expected: number | undefined,
  current: DocVersion & { writeIds?: string[] },
): Conditional {
  if (expected !== undefined && expected !== current.version) {
    throw new ConflictError(
      `stale version ${expected}: the record is at version ${current.version}; re-read it and retry`,
    );
  }
  return conditionOn(current);
}

/** A write conditional on a read: its seq_no/primary_term, and the ids of the writes before it (write-token.ts). */
export interface Conditional {
  if_seq_no: number;
  if_primary_term: number;
  priorWriteIds?: string[];
}

/** The condition of a write that follows `read`. */
export function conditionOn(read: { seqNo: number; primaryTerm: number; writeIds?: string[] }): Conditional {
  return { if_seq_no: read.seqNo, if_primary_term: read.primaryTerm, ...(read.writeIds ? { priorWriteIds: read.writeIds } : {}) };
}
