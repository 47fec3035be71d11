/** RFC 6902 patches of a UTM record (spec 4.5 PATCH): which fields a patch may touch, and applying it. */
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type Joi from 'joi';
import { BadRequestError, MethodNotAllowedError } from '../../errors.js';
import { validatePart } from '../../validation.js';
import { SERVER_OWNED_FIELDS, type EndpointDoc, type EndpointRecord } from './model.js';
import { endpointBody } from './schema.js';

/** A validated request body of one family (dates already parsed by joi). */
export type EndpointInput = Partial<Omit<EndpointDoc, 'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy' | 'interfaces' | 'scanner'>> & {
  version?: number;
};

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * The top-level field a JSON pointer addresses ('' for the whole document); undefined for a
 * malformed pointer (applying the patch then answers 400).
 */
function topField(pointer: string): string | undefined {
  if (pointer === '') return '';
  if (!pointer.startsWith('/')) return undefined;
  return unescapePointer(pointer.split('/')[1] ?? '');
}

/** 405 when an operation changes a server-owned field (or the whole record). */
export function assertPatchable(ops: Operation[]): void {
  for (const op of ops) {
    const touched = [op.path, ...(op.op === 'move' ? [(op as { from?: string }).from ?? ''] : [])];
    if (op.op === 'test') continue;
    for (const pointer of touched) {
      const field = topField(pointer);
      if (field === undefined) continue;
      if (field === '' || (SERVER_OWNED_FIELDS as readonly string[]).includes(field)) {
        throw new MethodNotAllowedError(`${op.op} ${pointer || '/'}: ${field || 'the whole record'} is owned by the server and cannot be patched`);
      }
    }
  }
}

/** A UTM body whose orgId is required; built once, so its validation is prepared once (ADR 0138). */
const patchedUtmBody: Joi.Schema = endpointBody('utm').fork(['orgId'], (f) => f.required());

/**
 * The patched record as a validated UTM body: 400 when the patch cannot be applied or its
 * result is not a valid UtmEndpoint (unlike a PUT body it cannot lean on the stored orgId).
 */
export function applyUtmPatch(record: EndpointRecord, ops: Operation[]): EndpointInput {
  let patched: EndpointRecord;
  try {
    patched = jsonpatch.applyPatch(jsonpatch.deepClone(record) as EndpointRecord, ops, true, true).newDocument;
  } catch (err) {
    if (err instanceof jsonpatch.JsonPatchError) {
      throw new BadRequestError(`body[${err.index ?? 0}]: ${err.name}: ${err.message.split('\n')[0]}`);
    }
    // The library refuses __proto__/constructor paths with a TypeError.
    if (err instanceof TypeError) throw new BadRequestError(`body: ${err.message}`);
    throw err;
  }
  return validatePart<EndpointInput>(patchedUtmBody, patched, 'body');
}
