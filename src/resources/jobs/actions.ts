/**
 * What a job does to one endpoint, through the services of the resources it touches (never
 * their stores). Every action can be replayed after a crash without acting twice: a command
 * is created under an id derived from the job and the endpoint (a replay meets "already
 * exists" and counts it done), module and license assignments set a value (setting it again
 * changes nothing), and soft-deleting a deleted endpoint is a no-op.
 */
import crypto from 'node:crypto';
import type { Access } from '../../http/auth.js';
import { uuidFrom } from '../../http/idempotency.js';
import { AppError, ConflictError, NotFoundError } from '../../errors.js';
import type { CommandService } from '../commands/service.js';
import type { EndpointService } from '../endpoints/service.js';
import type { LicenseService } from '../licenses/service.js';
import type { ModuleService } from '../modules/service.js';
import { moduleFieldsOf } from '../modules/model.js';
import type { ModuleName } from '../module-names.js';
import type { LicenseType } from '../licenses/model.js';
import type { JobAction } from './store.js';

/** The services a job acts through. */
export interface JobTargets {
  commands: Pick<CommandService, 'runCommand' | 'getMessage'>;
  modules: Pick<ModuleService, 'get' | 'create' | 'replace'>;
  licenses: Pick<LicenseService, 'put'>;
  endpoints: Pick<EndpointService, 'getVisible' | 'softDelete'>;
}

/** The id of the command a job creates for an endpoint: the same on every replay. */
export function jobCommandId(jobId: string, endpointId: string): string {
  return uuidFrom(crypto.createHash('sha256').update(`job\n${jobId}\n${endpointId}`).digest('hex'));
}

/** Attempts at a module read-modify-write racing other writers of the same record. */
const MODULE_ATTEMPTS = 5;

async function setModule(t: JobTargets, endpointId: string, module: ModuleName, status: 'ACTIVE' | 'INACTIVE', access: Access): Promise<void> {
  for (let n = 1; ; n++) {
    try {
      await t.modules.create('endpoint', endpointId, { [module]: status }, access);
      return;
    } catch (err) {
      // 409: the endpoint has its record already; set the one field on it.
      if (!(err instanceof ConflictError)) throw err;
    }
    const cur = await t.modules.get('endpoint', endpointId, access);
    if (cur[module] === status) return;
    try {
      await t.modules.replace('endpoint', endpointId, { ...moduleFieldsOf(cur), [module]: status, version: cur.version }, access);
      return;
    } catch (err) {
      // A stale version (another writer in between) or a record deleted since: read again, a few times.
      if (!(err instanceof ConflictError || err instanceof NotFoundError) || n >= MODULE_ATTEMPTS) throw err;
    }
  }
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
      return setModule(t, endpointId, action.module as ModuleName, action.type === 'ENABLE_MODULE' ? 'ACTIVE' : 'INACTIVE', access);
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
