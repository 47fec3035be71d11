/** Builds the commands resource: command messages, their deliveries and their expiry. */
import type { BaseDeps } from '../deps.js';
import type { EndpointService } from '../endpoints/service.js';
import { loadCatalogue } from './catalogue.js';
import { DeliveryStore } from './delivery-store.js';
import { CommandExpiry } from './expiry.js';
import { CommandService, type CommandOptions, type ModuleStatusSource, type VendorInstallationSource } from './service.js';
import { CommandMessageStore } from './store.js';

export function createCommands(
  { config, store }: BaseDeps,
  deps: { endpoints: EndpointService; modules: ModuleStatusSource; vendorData: VendorInstallationSource; presence: CommandOptions['presence'] },
): CommandService {
  return new CommandService(
    new CommandMessageStore(store),
    new DeliveryStore(store),
    deps.endpoints,
    deps.modules,
    deps.vendorData,
    loadCatalogue(),
    { expiry: new CommandExpiry({ ttlSeconds: config.commandTtlSeconds, maxRetries: config.commandMaxRetries }), presence: deps.presence },
  );
}
