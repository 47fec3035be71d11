/** Installer download links (GET /ui/installer/{platform}: a JSON string, a signed URL). */
import { API, client, unwrap } from './client';

export type Platform = 'windows' | 'mac' | 'linux';
export const PLATFORMS: Platform[] = ['windows', 'mac', 'linux'];

export function installerUrl(platform: Platform): Promise<string> {
  return unwrap(client.GET(`${API}/ui/installer/{platform}`, { params: { path: { platform } } }));
}
