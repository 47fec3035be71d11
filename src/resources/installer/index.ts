/** Builds the installer resource: signed installer URLs of the effective default version. */
import type { BaseDeps } from '../deps.js';
import type { ClientVersionService } from '../client-versions/service.js';
import { InstallerService } from './service.js';

export function createInstaller({ config }: BaseDeps, clientVersions: ClientVersionService): InstallerService {
  return new InstallerService(clientVersions, {
    baseUrl: config.installerBaseUrl,
    signingKey: config.installerSigningKey,
    ttlSeconds: config.installerUrlTtlSeconds,
  });
}
