/** joi schemas of the software inventory records (spec 4.10; fields designed here). */
import Joi from 'joi';
import { pagedCriteriaSchema, pageSchema } from '../../http/paging.js';
import { withFastAccept } from '../../http/routes.js';
import { id, isoDate, isoDateOut, orgId } from '../../http/schemas.js';
import { INVENTORY_SORT_FIELDS, SUMMARY_SORT_FIELDS } from './model.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]+$/;

/** Maximum lengths of the text fields of InstalledSoftware (the schema and its fast acceptor). */
const MAX = { name: 256, version: 128, vendor: 256, architecture: 32 } as const;

/** Bounded printable text: no control characters (the summary key joins name and version with one). */
const text = (max: number): Joi.StringSchema =>
  Joi.string().trim().min(1).max(max).pattern(NO_CONTROL, 'text without control characters');

/** Optional text: '' and null mean absent (agents often send empty strings). */
const optionalText = (max: number): Joi.StringSchema =>
  text(max).empty(Joi.valid('', null)).description("optional; '' and null mean absent");

export const softwareName = text(MAX.name).description('software name, as the agent reports it (case-sensitive)');
export const softwareVersion = text(MAX.version).description('software version, as the agent reports it');

const installedSoftwareFields = {
  name: softwareName.required(),
  version: softwareVersion.required(),
  vendor: optionalText(MAX.vendor),
  installDate: isoDate
    .empty(Joi.valid('', null))
    .description("ISO 8601 date or date-time, stored and returned as a UTC date-time; '' and null mean absent"),
  architecture: optionalText(MAX.architecture),
};

/** What an agent sends for one installed product. */
export const installedSoftware = Joi.object(installedSoftwareFields).label('InstalledSoftware').meta({ className: 'InstalledSoftware' }).example({"name": "7-Zip", "version": "23.01", "vendor": "Igor Pavlov", "installDate": "2026-03-02T00:00:00.000Z", "architecture": "x64"});

/** InstalledSoftware in the body of a single-product operation: the path names it, so name may be left out. */
export const installedSoftwareForPath = Joi.object({
  ...installedSoftwareFields,
  name: softwareName.description('optional; when given it must equal the name in the path'),
})
  .required()
  .label('InstalledSoftware').meta({ className: 'InstalledSoftwareForPath' }).example({"version": "23.01", "vendor": "Igor Pavlov"});

const ITEM_KEYS = new Set(Object.keys(installedSoftwareFields));
/** The installDate forms the fast path converts itself (joi's ISO 8601 accepts these and more). */
const PLAIN_ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z)?$/;

/** True for a string `text(max)` accepts unchanged: already trimmed, 1..max long, no control characters. */
function plainText(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= max && v.trim() === v && !CONTROL.test(v);
}

/** The item as `installedSoftware` would answer it, for the common shape; undefined otherwise. */
function fastItem(raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!ITEM_KEYS.has(k)) return undefined;
  if (!plainText(o.name, MAX.name) || !plainText(o.version, MAX.version)) return undefined;
  if (o.vendor !== undefined && !plainText(o.vendor, MAX.vendor)) return undefined;
  if (o.architecture !== undefined && !plainText(o.architecture, MAX.architecture)) return undefined;
  if (o.installDate === undefined) return o;
  if (typeof o.installDate !== 'string' || !PLAIN_ISO_DATE.test(o.installDate)) return undefined;
  const date = new Date(o.installDate);
  return Number.isNaN(date.getTime()) ? undefined : { ...o, installDate: date };
}

/** The full inventory; more than 10,000 distinct entries answers 413 (checked after de-duplication). */
export const installedSoftwareList = withFastAccept(
  Joi.array()
    .items(installedSoftware)
    .required()
    .description('the agent\'s full inventory; at most 10,000 distinct (name, version) entries, duplicates count once'),
  (value) => {
    if (!Array.isArray(value)) return undefined;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = fastItem(value[i]);
      if (!item) return undefined;
      out[i] = item;
    }
    return out;
  },
);

export const softwareChange = Joi.object({
  version: softwareVersion.required().description('the new version'),
  previousVersion: softwareVersion.description('the version being replaced; required when the endpoint has several versions of the name'),
})
  .required()
  .label('SoftwareChange').meta({ className: 'SoftwareChange' }).example({"version": "24.08", "previousVersion": "23.01"});

const criteriaFields = {
  name: softwareName.description('exact name'),
  namePrefix: Joi.string().trim().min(1).max(256).description('name prefix, case-insensitive'),
  version: softwareVersion.description('exact version'),
  vendor: text(256).description('exact vendor'),
};

export const pagedSoftwareInventorySearchCriteria = pagedCriteriaSchema(
  Joi.object(criteriaFields).label('SoftwareInventorySearchCriteria').meta({ className: 'SoftwareInventorySearchCriteria' }),
  Object.keys(INVENTORY_SORT_FIELDS),
  'PagedSoftwareInventorySearchCriteria',
);

export const pagedSummarySoftwareInventorySearchCriteria = pagedCriteriaSchema(
  Joi.object(criteriaFields).label('SummarySoftwareInventorySearchCriteria').meta({ className: 'SummarySoftwareInventorySearchCriteria' }),
  SUMMARY_SORT_FIELDS,
  'PagedSummarySoftwareInventorySearchCriteria',
);

export const endpointInstalledSoftware = Joi.object({
  id: Joi.string().required().description('deterministic: derived from endpointId, name and version'),
  endpointId: Joi.string().required(),
  orgId: Joi.string().required(),
  name: Joi.string().required(),
  version: Joi.string().required(),
  vendor: Joi.string(),
  installDate: isoDateOut,
  architecture: Joi.string(),
  firstSeen: isoDateOut.required().description('when this name and version was first reported for the endpoint'),
  lastSeen: isoDateOut.required().description('the last report that contained it (refreshed at most once a day when unchanged)'),
}).label('EndpointInstalledSoftware').meta({ className: 'EndpointInstalledSoftware' }).example({"id": "ep-7f3a9c:7-Zip:23.01", "endpointId": "ep-7f3a9c", "orgId": "msp-1", "name": "7-Zip", "version": "23.01", "vendor": "Igor Pavlov", "installDate": "2026-03-02T00:00:00.000Z", "architecture": "x64", "firstSeen": "2026-11-20T09:15:00.000Z", "lastSeen": "2026-11-26T08:00:00.000Z"});

export const endpointInstalledSoftwareWithName = endpointInstalledSoftware
  .keys({ endpointName: Joi.string().description("the endpoint's displayName") })
  .label('EndpointInstalledSoftwareWithName').meta({ className: 'EndpointInstalledSoftwareWithName' });

export const endpointInstalledSoftwareCount = Joi.object({
  name: Joi.string().required(),
  version: Joi.string().required(),
  count: Joi.number().integer().min(0).required().description('number of endpoints that have this name and version'),
}).label('EndpointInstalledSoftwareCount').meta({ className: 'EndpointInstalledSoftwareCount' });

export const pageSoftwareInventoryData = pageSchema(endpointInstalledSoftware, 'EndpointInstalledSoftwarePage');
export const pageEndpointInstalledSoftwareCount = pageSchema(endpointInstalledSoftwareCount, 'EndpointInstalledSoftwareCountPage');

export const endpointParams = Joi.object({ id: id.required() });
export const endpointNameParams = Joi.object({ id: id.required(), name: softwareName.required() });
export const orgParams = Joi.object({ id: orgId.required() });
export const orgSoftwareParams = Joi.object({
  id: orgId.required(),
  softwareName: softwareName.required(),
  softwareVersion: softwareVersion.required(),
});
