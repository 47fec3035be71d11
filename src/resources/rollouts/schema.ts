/** joi schemas of rollouts (an extension): the request, the record, the page search. */
import Joi from 'joi';
import { pagedCriteriaSchema, pageSchema } from '../../http/paging.js';
import { id, isoDateOut, orgId, userKey } from '../../http/schemas.js';
import { RING_STATES, ROLLOUT_SORT_FIELDS, ROLLOUT_STATES, WEEKDAYS } from './model.js';


const vVersion = Joi.string()
  .max(64)
  .pattern(/^v(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/, 'v-prefixed semantic version')
  .messages({ 'string.pattern.name': '"{{#value}}" is not a v-prefixed semantic version (e.g. v3.10.2)' });

const targetVersion = Joi.object({ linux: vVersion, mac: vVersion, windows: vVersion })
  .min(1)
  .label('RolloutTargetVersion')
  .meta({ className: 'RolloutTargetVersion' })
  .description('The v-prefixed version each operating system is upgraded to; an OS left out is not upgraded; at least one is given');

const ringIn = Joi.alternatives()
  .try(
    Joi.object({ orgIds: Joi.array().items(orgId).min(1).max(1000).unique().required() }).label('OrgRing').meta({ className: 'OrgRing' }),
    Joi.object({ percent: Joi.number().integer().min(1).max(100).required() }).label('PercentRing').meta({ className: 'PercentRing' }),
  )
  .messages({ 'alternatives.match': 'a ring takes orgIds (organizations, with those below them) or percent (1..100)' })
  .label('RolloutRingSpec')
  .meta({ className: 'RolloutRingSpec' });

const gate = Joi.object({
  minHealthyPercent: Joi.number().min(0).max(100).required(),
  withinSeconds: Joi.number().integer().min(1).max(30 * 86_400).required(),
})
  .label('RolloutGate')
  .meta({ className: 'RolloutGate' })
  .description('After the soak, a ring passes when this share of its judged endpoints is healthy; an endpoint online when sent its command fails when it has not reported the target version within withinSeconds');

const hhmm = Joi.string().pattern(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM');

const maintenanceWindow = Joi.object({
  orgId: orgId.required(),
  days: Joi.array()
    .items(Joi.string().uppercase().valid(...WEEKDAYS))
    .min(1)
    .max(7)
    .required(),
  start: hhmm.required(),
  end: hhmm.required(),
  timeZone: Joi.string().max(64).required().description('IANA time zone of the customer, e.g. Europe/Berlin'),
})
  .label('MaintenanceWindow')
  .meta({ className: 'MaintenanceWindow' })
  .description("Hours when the organization's endpoints (and those below it) may be upgraded, in its own time zone; an end before the start runs past midnight");

/** POST /rollouts body. */
export const newRollout = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  orgId: orgId.required(),
  targetVersion: targetVersion.required(),
  rings: Joi.array().items(ringIn).min(1).max(20).required(),
  soakSeconds: Joi.number().integer().min(0).max(30 * 86_400).required(),
  gate: gate.required(),
  autoRollback: Joi.boolean().required(),
  windows: Joi.array().items(maintenanceWindow).max(1000),
})
  .required()
  .label('NewRollout')
  .meta({ className: 'NewRollout' })
  .example({
    name: 'agent v3.11.0',
    orgId: 'msp-1',
    targetVersion: { linux: 'v3.11.0', mac: 'v3.11.0', windows: 'v3.11.0' },
    rings: [{ orgIds: ['msp-test'] }, { percent: 5 }, { percent: 100 }],
    soakSeconds: 3600,
    gate: { minHealthyPercent: 95, withinSeconds: 1800 },
    autoRollback: true,
    windows: [{ orgId: 'cust-berlin', days: ['SAT', 'SUN'], start: '01:00', end: '05:00', timeZone: 'Europe/Berlin' }],
  });

const counts = Joi.object({
  total: Joi.number().integer().min(0).required(),
  upgraded: Joi.number().integer().min(0).required(),
  healthy: Joi.number().integer().min(0).required(),
  failed: Joi.number().integer().min(0).required(),
  pending: Joi.number().integer().min(0).required(),
})
  .label('RolloutRingCounts')
  .meta({ className: 'RolloutRingCounts' })
  .description('upgraded: reports the target version; healthy: upgraded and seen alive since; failed: its command failed or it did not come back in time; pending: neither yet (offline, held by a window, or within its time)');

const ring = Joi.object({
  orgIds: Joi.array().items(Joi.string()),
  percent: Joi.number(),
  state: Joi.string()
    .valid(...RING_STATES)
    .required(),
  counts: counts.required(),
  startedAt: isoDateOut,
  sentAt: isoDateOut,
  judgedAt: isoDateOut,
})
  .label('RolloutRing')
  .meta({ className: 'RolloutRing' });

export const rolloutRecord = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  orgId: Joi.string().required(),
  targetVersion: targetVersion.required(),
  rings: Joi.array().items(ring).required(),
  soakSeconds: Joi.number().integer().required(),
  gate: gate.required(),
  autoRollback: Joi.boolean().required(),
  windows: Joi.array().items(maintenanceWindow).required(),
  state: Joi.string()
    .valid(...ROLLOUT_STATES)
    .required(),
  currentRing: Joi.number().integer().min(0).required(),
  reason: Joi.string().description('Why the rollout last changed state, e.g. "ring 2: 61 % healthy of 1,204, gate 95 %"'),
  startedAt: isoDateOut.required(),
  updatedAt: isoDateOut.required(),
  finishedAt: isoDateOut,
  createdBy: userKey.required(),
  version: Joi.number().integer().min(1).required(),
})
  .label('Rollout')
  .meta({ className: 'Rollout' });

const criteria = Joi.object({
  orgId: orgId.description('Rollouts of this organization (within the caller’s subtree)'),
  state: Joi.string().valid(...ROLLOUT_STATES),
})
  .label('RolloutSearchCriteria')
  .meta({ className: 'RolloutSearchCriteria' });

export const pagedRolloutCriteria = pagedCriteriaSchema(criteria, Object.keys(ROLLOUT_SORT_FIELDS), 'PagedRolloutSearchCriteria').required();
export const pageRollout = pageSchema(rolloutRecord, 'PageRollout');
export const rolloutIdParams = Joi.object({ id: id.required() });
