/** Config (body of POST /config/org; designed here) and its ConfigFields (spec 2.4). */
import type { UserKey } from '../../domain.js';

export interface WinEventLogConfig {
  name: string;
  api: string;
}

export interface WinEventIgnore {
  product: string;
  eventId: number;
}

/** The known entries; further scalar entries are allowed. */
export interface ConfigFields {
  dynamicModules?: string[];
  enableFim?: boolean;
  enableWindowsEventLog?: boolean;
  commUrl?: string;
  commKeepAliveSeconds?: number;
  commMinRetryDelaySeconds?: number;
  commMaxRetryDelaySeconds?: number;
  commMaxRetries?: number;
  journalFileName?: string;
  journalMaxSizeMB?: number;
  journalMaxBackups?: number;
  journalMaxAgeDays?: number;
  loggingFileName?: string;
  loggingMaxSizeMB?: number;
  windowsEventLogs?: WinEventLogConfig[];
  windowsEventIgnores?: WinEventIgnore[];
  /** Extension: the organization's presence timeout, seconds. */
  presenceTimeoutSeconds?: number;
  [extra: string]: string | number | boolean | string[] | WinEventLogConfig[] | WinEventIgnore[] | undefined;
}

export interface Config {
  orgId: string;
  fields: ConfigFields;
}

/** Config as returned: the body plus who wrote it and when. */
export interface StoredConfig extends Config {
  createdAt: string;
  createdBy: UserKey;
  updatedAt: string;
  updatedBy: UserKey;
}
