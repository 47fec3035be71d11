/** The module names (spec 2.4), shared by the modules resource and the bundle catalogue that names them. */
import Joi from 'joi';

/** The 14 module fields of EnabledModules, in the spec's order. */
export const MODULE_NAMES = [
  'fim',
  'wel',
  'antivirus',
  'cmd',
  'dnsFilter',
  'fusionScanner',
  'iocDetection',
  'pan',
  'policy',
  'network',
  'softwareInventory',
  'vuln',
  'fde',
  'mdr',
] as const;
export type ModuleName = (typeof MODULE_NAMES)[number];

/** One module name: the enum `ModuleName` of the OpenAPI document. */
export const moduleNameSchema = Joi.string()
  .valid(...MODULE_NAMES)
  .meta({ className: 'ModuleName' });
