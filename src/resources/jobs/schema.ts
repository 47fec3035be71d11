/** joi schemas of bulk-action jobs (an extension): the request, the record, the list. */
import Joi from 'joi';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, pageSchema } from '../../http/paging.js';
import { id, isoDateOut, orgId, userKey } from '../../http/schemas.js';
import { ENDPOINT_CRITERIA } from '../endpoints/schema.js';
import { COMMAND_NAME_PATTERN } from '../commands/catalogue.js';
import { MODULE_NAMES } from '../module-names.js';
import { LICENSE_TYPES } from '../licenses/model.js';
import { JOB_ACTION_TYPES, JOB_STATES } from './store.js';

const actionType = (...types: string[]): Joi.StringSchema =>
  Joi.string()
    .valid(...types)
    .required();

/** One action; `type` decides which other fields it takes. */
export const jobAction = Joi.alternatives()
  .try(
    Joi.object({
      type: actionType('SEND_COMMAND'),
      command: Joi.string().pattern(COMMAND_NAME_PATTERN, 'command name').required(),
      args: Joi.array().items(Joi.string().max(1024)).max(32),
    })
      .label('SendCommandAction')
      .meta({ className: 'SendCommandAction' }),
    Joi.object({
      type: actionType('ENABLE_MODULE', 'DISABLE_MODULE'),
      module: Joi.string()
        .valid(...MODULE_NAMES)
        .required(),
    })
      .label('ModuleAction')
      .meta({ className: 'ModuleAction' }),
    Joi.object({
      type: actionType('ASSIGN_LICENSE'),
      licenseType: Joi.string()
        .valid(...LICENSE_TYPES)
        .required(),
    })
      .label('AssignLicenseAction')
      .meta({ className: 'AssignLicenseAction' }),
    Joi.object({ type: actionType('SOFT_DELETE') })
      .label('SoftDeleteAction')
      .meta({ className: 'SoftDeleteAction' }),
  )
  .required()
  .messages({ 'alternatives.match': `must be one of the actions ${JOB_ACTION_TYPES.join(', ')} with its fields` })
  .label('JobAction')
  .meta({ className: 'JobAction', discriminator: 'type' })
  .description(
    "SEND_COMMAND: a catalogue command (as POST /command/endpoint/{endpointId}); ENABLE_MODULE / DISABLE_MODULE: the module ACTIVE / INACTIVE in the endpoint's EnabledModules; ASSIGN_LICENSE: the endpoint's license (id and ownerId = the endpoint id) gets that type; SOFT_DELETE: as DELETE /endpoint/{id}",
  );

/**
 * POST /jobs body: an action and EndpointCriteria exactly as the endpoint page search takes
 * them. Criteria that narrow nothing select every agent of the caller's subtree, which the
 * caller must say with `allAgents: true` (docs/adr/0062-selecting-everything-is-explicit.md).
 */
export const newJob = Joi.object({
  action: jobAction,
  criteria: ENDPOINT_CRITERIA.default(),
  allAgents: Joi.boolean()
    .default(false)
    .description(
      "true: act on every agent of the caller's subtree; required when the criteria narrow nothing (no orgId, basic, connectionStatuses or hideInactiveAfterDays), refused with criteria that do",
    ),
})
  .required()
  .label('NewJob')
  .meta({ className: 'NewJob' });

export const createJobQuery = Joi.object({
  // Deprecated: kept for the callers of API 1.0; POST /jobs/dry-run is the operation (docs/adr/0122-dry-run-an-operation-of-its-own.md).
  dryRun: Joi.boolean()
    .default(false)
    .meta({ deprecated: true })
    .description(
      'Deprecated, use POST /jobs/dry-run: true answers 200 with the same JobDryRun that operation answers, without creating the job',
    ),
});

export const jobDryRun = Joi.object({
  matched: Joi.number().integer().min(0).required().description('agents the job would act on now'),
  organizations: Joi.array()
    .items(
      Joi.object({ orgId: Joi.string().required(), count: Joi.number().integer().min(1).required() }).label('JobDryRunOrganization').meta({ className: 'JobDryRunOrganization' }),
    )
    .required()
    .description('the organizations those agents belong to, with how many in each, largest first'),
  allAgents: Joi.boolean().required().description("true when the job would act on every agent of the caller's subtree"),
  typedConfirmation: Joi.boolean()
    .required()
    .description('true for a SOFT_DELETE matching more agents than ECS_JOB_CONFIRM_TYPED_COUNT: a console asks the person to type the count before starting it'),
})
  .label('JobDryRun')
  .meta({ className: 'JobDryRun' });

const failure = Joi.object({
  endpointId: Joi.string().required(),
  status: Joi.number().integer().required(),
  reason: Joi.string().required(),
})
  .label('JobFailure')
  .meta({ className: 'JobFailure' });

export const jobRecord = Joi.object({
  id: Joi.string().required(),
  state: Joi.string()
    .valid(...JOB_STATES)
    .required(),
  orgId: Joi.string(),
  action: jobAction,
  criteria: ENDPOINT_CRITERIA,
  matched: Joi.number().integer().min(0).required().description('agents matching when the scan started'),
  done: Joi.number().integer().min(0).required(),
  failed: Joi.number().integer().min(0).required(),
  failures: Joi.array().items(failure).required().description('a sample of the failures (the first 20) with reasons'),
  reason: Joi.string().description('why the job FAILED'),
  createdBy: userKey,
  createdAt: isoDateOut,
  updatedAt: isoDateOut,
  startedAt: isoDateOut,
  finishedAt: isoDateOut,
})
  .label('Job')
  .meta({ className: 'Job' });

export const pageJob = pageSchema(jobRecord, 'JobPage');

export const jobIdParams = Joi.object({ id: id.required() });

export const jobListQuery = Joi.object({
  state: Joi.string().valid(...JOB_STATES),
  orgId: orgId,
  page: Joi.number().integer().min(0).default(0),
  size: Joi.number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
});
