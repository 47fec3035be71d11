/** Builds the audit resource: the trail's store and service, and its retention. */
import type { BaseDeps } from '../deps.js';
import { LeaseStore } from '../../store/lease.js';
import { RolloverRetention, type RetentionOptions } from '../../store/retention.js';
import { AuditService } from './service.js';
import { AuditStore } from './store.js';

export interface Audit {
  service: AuditService;
  /** Background: audit retention, the same mechanism as the heartbeats'. */
  retention: RolloverRetention;
}

export function createAudit({ config, store, log }: BaseDeps, retentionSchedule: Omit<RetentionOptions, 'retentionDays'>): Audit {
  const auditStore = new AuditStore(store);
  const retention = new RolloverRetention(
    auditStore,
    new LeaseStore(store),
    { ...retentionSchedule, retentionDays: config.auditRetentionDays, rollover: config.maintenance.auditRollover },
    log,
    'audit-retention',
  );
  return { service: new AuditService(auditStore, log), retention };
}
