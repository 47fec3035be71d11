/** GET /ui/installer/{platform}: a signed URL of the current installer for a platform. */
import type { ClientVersionService } from '../client-versions/service.js';
import { signInstallerUrl } from './signing.js';

export const INSTALLER_PLATFORMS = ['windows', 'mac', 'linux'] as const;
export type InstallerPlatform = (typeof INSTALLER_PLATFORMS)[number];

const PACKAGE_SUFFIX: Record<InstallerPlatform, string> = {
  windows: 'windows.msi',
  mac: 'mac.pkg',
  linux: 'linux.tar.gz',
};

export interface InstallerSettings {
  baseUrl: string;
  signingKey: string;
  ttlSeconds: number;
}

export class InstallerService {
  constructor(
    private readonly versions: ClientVersionService,
    private readonly settings: InstallerSettings,
  ) {}

  /**
   * The signed URL of the installer of the effective default version for the platform
   * (the version new agents are meant to run: stored override, configured default, or the
   * latest known release).
   */
  async installerUrl(platform: InstallerPlatform, nowMs: number = Date.now()): Promise<string> {
    const version = (await this.versions.effectiveDefaults())[platform];
    const file = `endpoint-agent-${version}-${PACKAGE_SUFFIX[platform]}`;
    return signInstallerUrl(this.settings.baseUrl, [platform, version, file], this.settings.signingKey, this.settings.ttlSeconds, nowMs);
  }
}
