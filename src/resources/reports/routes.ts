/** Spec 4.9: the host-info aggregation report. */
import Joi from 'joi';
import { READERS } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { aggregationTermBucket, orgId } from '../../http/schemas.js';
import { HOST_INFO_COLUMNS, type ReportCriteria, type ReportService } from './service.js';

const reportCriteria = Joi.object<ReportCriteria>({
  orgIds: Joi.array().items(orgId).max(1000).default([]).description('organizations to count (exactly these); empty: the caller\'s subtree'),
  column: Joi.string()
    .valid(...HOST_INFO_COLUMNS)
    .required()
    .description('the hostInfo field to group by'),
})
  .required()
  .label('ReportCriteria').meta({ className: 'ReportCriteria' });

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'report', sec: true, roles: READERS, errors: [400, 401, 403] });

export function reportRoutes(svc: ReportService): RouteSpec[] {
  return [
    route<Record<string, never>, Record<string, never>, ReportCriteria>({
      operationId: 'hostInfoAggregation',
      method: 'POST',
      path: '/report/host-info/aggregation',
      summary: 'Non-deleted endpoints counted per value of one hostInfo field, count descending then key',
      lane: 'heavy',
      body: reportCriteria,
      responses: { 200: { description: 'OK', schema: Joi.array().items(aggregationTermBucket) } },
      handler: async ({ body, access }) => ok(await svc.hostInfoAggregation(body, access)),
    }),
  ];
}
