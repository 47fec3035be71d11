/**
 * What a job does to one endpoint, through the services of the resources it touches (never
 * their stores). Every action can be replayed after a crash without acting twice: a command
 * is created under an id derived from the job and the endpoint (a replay meets "already
 * exists" and counts it done), module and license assignments set a value (setting it again
 * changes nothing; ModuleService.setModule retries its own write conflicts), and
 * soft-deleting a deleted endpoint is a no-op.
 */
import crypto from 'node:crypto';
import type { Access } from '../../access/access.js';
import { uuidFrom } from '../../domain.js';
import { AppError, NotFoundError } from '../../errors.js';
import type { CommandService } from '../commands/service.js';
import type { EndpointService } from '../endpoints/service.js';
import type { LicenseService } from '../licenses/service.js';
import type { ModuleService } from '../modules/service.js';
import type { ModuleName } from '../module-names.js';
import type { LicenseType } from '../licenses/model.js';
import type { JobAction } from './store.js';

/** The services a job acts through. */
export interface JobTargets {
  commands: Pick<CommandService, 'runCommand' | 'getMessage'>;
  modules: Pick<ModuleService, 'setModule'>;
  licenses: Pick<LicenseService, 'put'>;
  endpoints: Pick<EndpointService, 'getVisible' | 'softDelete'>;
}

/** The id of the command a job creates for an endpoint: the same on every replay. */
export function jobCommandId(jobId: string, endpointId: string): string {
  return uuidFrom(crypto.createHash('sha256').update(`job\n${jobId}\n${endpointId}`).digest('hex'));
}

/** Acts on one endpoint as the job's creator; throws the service's error when it refuses. */
export async function actOn(t: JobTargets, jobId: string, action: JobAction, endpointId: string, access: Access): Promise<void> {
  switch (action.type) {
    case 'SEND_COMMAND': {
      const id = jobCommandId(jobId, endpointId);
      try {
        await t.commands.runCommand(endpointId, { command: action.command, args: action.args }, access, id);
      } catch (err) {
        // A replay whose endpoint stopped accepting since the first attempt: the command exists, the action is done.
        if (err instanceof AppError && err.status < 500) {
          const earlier = await t.commands.getMessage(id, access).catch(() => undefined);
          if (earlier?.endpointId === endpointId) return;
        }
        throw err;
      }
      return;
    }
    case 'ENABLE_MODULE':
    case 'DISABLE_MODULE':
      return t.modules.setModule('endpoint', endpointId, action.module as ModuleName, action.type === 'ENABLE_MODULE' ? 'ACTIVE' : 'INACTIVE', access);
    case 'ASSIGN_LICENSE': {
      // The endpoint's current organization (it may have moved since the scan), checked against the creator's reach.
      const ep = await t.endpoints.getVisible(endpointId, access);
      await t.licenses.put(endpointId, { type: action.licenseType as LicenseType, orgId: ep.doc.orgId, ownerId: endpointId }, access);
      return;
    }
    case 'SOFT_DELETE':
      try {
        await t.endpoints.softDelete(endpointId, access);
      } catch (err) {
        // The scan saw it live: a 404 now means it is deleted already (by a replayed batch or anyone).
        if (!(err instanceof NotFoundError)) throw err;
      }
      return;
  }
}
