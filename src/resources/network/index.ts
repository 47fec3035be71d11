/** Builds the network resource: heartbeats, hosts, and the heartbeats' retention. */
import type { BaseDeps } from '../deps.js';
import { LeaseStore } from '../../store/lease.js';
import type { RetentionOptions } from '../../store/retention.js';
import { HeartbeatStore } from './heartbeat-store.js';
import { NetworkHostStore } from './host-store.js';
import { HeartbeatRetention } from './retention.js';
import { NetworkService } from './service.js';

export interface Network {
  service: NetworkService;
  /** Background: heartbeat retention, one instance at a time. */
  retention: HeartbeatRetention;
}

export function createNetwork(
  { config, store, log }: BaseDeps,
  presence: ConstructorParameters<typeof NetworkService>[3],
  retentionSchedule: Omit<RetentionOptions, 'retentionDays'>,
): Network {
  const heartbeatStore = new HeartbeatStore(store);
  const service = new NetworkService(heartbeatStore, new NetworkHostStore(store), log, presence);
  const retention = new HeartbeatRetention(
    heartbeatStore,
    new LeaseStore(store),
    { ...retentionSchedule, retentionDays: config.heartbeatRetentionDays, rollover: config.maintenance.heartbeatRollover },
    log,
  );
  return { service, retention };
}
