/** joi pieces shared by every resource: ids, timestamps, UserKey, versions, buckets, counts. */
import Joi from 'joi';

/** Path/record ids: printable, bounded, no slash. */
export const id = Joi.string()
  .trim()
  .min(1)
  .max(256)
  .pattern(/^[^\s/\\?#]+$/, 'id without whitespace, slash, ? or #');

export const orgId = id.description('organization id');

export const isoDate = Joi.date().iso();

/** A date-time as returned by the service. */
export const isoDateOut = Joi.string().isoDate();

export const userKey = Joi.object({
  username: Joi.string().allow(''),
  authenticator: Joi.string().allow(''),
})
  .label('UserKey')
  .meta({ className: 'UserKey' });

export const seqNoPrimaryTerm = Joi.object({
  sequenceNumber: Joi.number().integer().min(0).required(),
  primaryTerm: Joi.number().integer().min(1).required(),
})
  .label('SeqNoPrimaryTerm')
  .meta({ className: 'SeqNoPrimaryTerm' });

export const aggregationTermBucket = Joi.object({
  key: Joi.string().required(),
  count: Joi.number().integer().min(0).required(),
})
  .label('AggregationTermBucket')
  .meta({ className: 'AggregationTermBucket' });

export const countWrapper = Joi.object({ count: Joi.number().integer().min(0).required() })
  .label('CountWrapper')
  .meta({ className: 'CountWrapper' });

/**
 * A server-owned field of a request body: any value is accepted (clients echo records back)
 * and stripped, never used. The OpenAPI document shows it read-only with the type the record
 * has (`recordType`), so a client generated from it accepts an echoed record.
 */
export function serverOwnedField(recordType: Joi.Schema): Joi.AnySchema {
  return Joi.any().strip().meta({ serverOwned: recordType });
}

/** Server-owned audit fields of a record whose createdBy/updatedBy are `user` (UserKey or a string, as the spec's type says). */
export function serverOwnedFields(
  user: Joi.Schema,
): Record<'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy', Joi.AnySchema> {
  return {
    createdAt: serverOwnedField(isoDateOut),
    updatedAt: serverOwnedField(isoDateOut),
    createdBy: serverOwnedField(user),
    updatedBy: serverOwnedField(user),
  };
}

/** Server-owned fields of records whose createdBy/updatedBy are UserKey: accepted in a body but never used. */
export const serverOwned = serverOwnedFields(userKey);

export const idParams = Joi.object({ id: id.required() });
