/** Spec 4.6: the signed URL of the current installer for a platform. */
import Joi from 'joi';
import { READERS, type Role } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { INSTALLER_PLATFORMS, type InstallerPlatform, type InstallerService } from './service.js';

const ALL: readonly Role[] = [...READERS, 'agent'];

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'modules', sec: true, roles: ALL, errors: [400, 401, 403] });

export function installerRoutes(svc: InstallerService): RouteSpec[] {
  return [
    route<{ platform: InstallerPlatform }>({
      operationId: 'getInstallerUrl',
      method: 'GET',
      path: '/ui/installer/{platform}',
      summary: 'A JSON string: the URL of the current installer for the platform, signed with an HMAC of its path and expiry',
      lane: 'interactive',
      params: Joi.object({ platform: Joi.string().valid(...INSTALLER_PLATFORMS).required() }),
      responses: { 200: { description: 'OK', schema: Joi.string().uri({ scheme: ['http', 'https'] }).example('https://downloads.example.net/agent/windows/agent-3.10.2.msi?expires=1764144000&signature=9c1d2e7a') } },
      handler: async ({ params }) => ok(await svc.installerUrl(params.platform)),
    }),
  ];
}
