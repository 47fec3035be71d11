/** The joi forms of a bundle: the catalogue file's and the admin operation's definition, and the served record. */
import Joi from 'joi';
import { id as idSchema } from '../../http/schemas.js';
import { MODULE_NAMES, moduleNameSchema } from '../module-names.js';

/** A bundle definition: the shape the catalogue file and the admin operation share. */
export const bundleFields = {
  id: idSchema.required(),
  name: Joi.string().trim().min(1).max(256).required(),
  description: Joi.string().trim().allow('').max(4096).default(''),
  modules: Joi.array()
    .items(moduleNameSchema)
    .min(1)
    // unique() already bounds it; max() says so in the document.
    .max(MODULE_NAMES.length)
    .unique()
    .required(),
};

export const bundleSchema = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  modules: Joi.array()
    .items(moduleNameSchema)
    .required(),
}).label('Bundle').meta({ className: 'Bundle' }).example({"id": "essentials", "name": "Essentials", "description": "File integrity and antivirus", "modules": ["fim", "antivirus"]});

