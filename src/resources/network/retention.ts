/**
 * Heartbeat retention: network heartbeats age out after `retentionDays`, a whole
 * rollover generation at a time, by the one retention mechanism (src/store/retention.ts).
 */
import type { Logger } from '../../log.js';
import type { LeaseStore } from '../../store/lease.js';
import { RolloverRetention, type RetentionOptions } from '../../store/retention.js';
import type { HeartbeatStore } from './heartbeat-store.js';

export type { RetentionOptions, RetentionRun } from '../../store/retention.js';

export const RETENTION_LEASE = 'heartbeat-retention';

export class HeartbeatRetention extends RolloverRetention {
  constructor(heartbeats: HeartbeatStore, lease: LeaseStore, opts: RetentionOptions, log: Logger) {
    super(heartbeats, lease, opts, log, RETENTION_LEASE);
  }
}
