/** Builds the client-versions resource: default versions, organization pins and the latest releases. */
import type { BaseDeps } from '../deps.js';
import type { OrganizationService } from '../organizations/service.js';
import { EndpointOrgConfigStore } from './endpoint-org-config-store.js';
import { ClientVersionService, loadLatestReleases, parseConfiguredDefaults } from './service.js';
import { ClientVersionStore } from './store.js';

export function createClientVersions({ config, store }: BaseDeps, orgs: OrganizationService): ClientVersionService {
  return new ClientVersionService(
    new ClientVersionStore(store),
    new EndpointOrgConfigStore(store),
    orgs,
    parseConfiguredDefaults(config.defaultClientVersions),
    loadLatestReleases(config.clientReleasesFile),
  );
}
