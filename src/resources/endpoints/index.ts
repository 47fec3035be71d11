/** Builds the endpoints resource: its store, its service and the presence of endpoints. */
import type { BaseDeps } from '../deps.js';
import { EndpointKeyStore } from './keys-store.js';
import { EndpointPresence } from './presence.js';
import { EndpointService, type EndpointDeps } from './service.js';
import { EndpointStore } from './store.js';

export interface Endpoints {
  service: EndpointService;
  /** The device migration (src/migration) copies the endpoints index itself: it shares the store, not the service. */
  store: EndpointStore;
  /** Presence of endpoints (last seen, POTENTIALLY_DISCONNECTED). */
  presence: EndpointPresence;
}

export function createEndpoints({ config, store, log }: BaseDeps, deps: Omit<EndpointDeps, 'keys'>): Endpoints {
  const endpointStore = new EndpointStore(store);
  const service = new EndpointService(endpointStore, { keys: new EndpointKeyStore(store), ...deps });
  // Presence is part of the endpoints resource: the store applies it to every read and stamps it on every connection-state write.
  const presence = new EndpointPresence(endpointStore, { defaultTimeoutSeconds: config.presenceTimeoutSeconds, log });
  endpointStore.presence = presence;
  return { service, store: endpointStore, presence };
}
