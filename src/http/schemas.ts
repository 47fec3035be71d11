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
}).label('UserKey');

export const seqNoPrimaryTerm = Joi.object({
  sequenceNumber: Joi.number().integer().min(0).required(),
  primaryTerm: Joi.number().integer().min(1).required(),
}).label('SeqNoPrimaryTerm');

export const aggregationTermBucket = Joi.object({
  key: Joi.string().required(),
  count: Joi.number().integer().min(0).required(),
}).label('AggregationTermBucket');

export const countWrapper = Joi.object({ count: Joi.number().integer().min(0).required() }).label('CountWrapper');

/** Server-owned fields: accepted in a body (clients echo records back) but never used. */
export const serverOwned = {
  createdAt: Joi.any().strip(),
  updatedAt: Joi.any().strip(),
  createdBy: Joi.any().strip(),
  updatedBy: Joi.any().strip(),
};

export const idParams = Joi.object({ id: id.required() });
