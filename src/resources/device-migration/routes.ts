/** Spec 4.4: one-off copies of UTM and LTE device records into PostgreSQL (no security declared). */
import Joi from 'joi';
import { SYSTEM_ONLY } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import type { DeviceMigrationService } from '../../migration/device-migration.js';
import type { DeviceFamily } from '../../migration/device-rows.js';

const count = Joi.number().integer().min(0).required();

export const migrationCounts = Joi.object({
  sourceCount: count.description('records read from Elasticsearch'),
  destCount: count.description('rows written or updated in PostgreSQL'),
  ignoredCount: count.description('records skipped: already migrated and unchanged, or deleted'),
}).label('MigrationCounts').meta({ className: 'MigrationCounts' });

function migrationRoute(svc: DeviceMigrationService, family: DeviceFamily, operationId: string, path: string): RouteSpec {
  const noun = family === 'utm' ? 'UTM' : 'LTE';
  return route({
    operationId,
    method: 'GET',
    path,
    summary: `Copy every ${noun} endpoint record to the relational store; answers the counts once the run completes`,
    lane: 'heavy',
    // Without a token: a perimeter caller. With one, only `system`: the copy spans every organization.
    // A GET that writes (PostgreSQL rows, migration marks): audited as a write.
    audited: true,
    responses: { 200: { description: 'Counts of the completed run', schema: migrationCounts } },
    handler: async () => ok(await svc.migrate(family)),
  });
}

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'device-migration', sec: false, roles: SYSTEM_ONLY, errors: [401, 403, 409, 500, 503] });

export function deviceMigrationRoutes(svc: DeviceMigrationService): RouteSpec[] {
  return [
    migrationRoute(svc, 'utm', 'migrateUtmDevices', '/device-migration/utm-devices'),
    migrationRoute(svc, 'lte', 'migrateLteDevices', '/device-migration/lte-devices'),
  ];
}
