/** Rollouts of an agent version (an extension): the records as the API shows them and as stored. */
import type { UserKey } from '../../domain.js';

export const ROLLOUT_STATES = ['RUNNING', 'PAUSED', 'HALTED', 'ROLLING_BACK', 'ROLLED_BACK', 'COMPLETED', 'ABORTED'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];
/** States in which a driver still has work: sending, judging, or sending the previous version back. */
export const DRIVEN_STATES: readonly RolloutState[] = ['RUNNING', 'ROLLING_BACK'];
/** States a rollout ends in. */
export const FINAL_STATES: readonly RolloutState[] = ['ROLLED_BACK', 'COMPLETED', 'ABORTED'];

/** The fields a page search of rollouts may sort by (API name → stored field). */
export const ROLLOUT_SORT_FIELDS: Readonly<Record<string, string>> = { startedAt: 'startedAt', updatedAt: 'updatedAt', name: 'name', state: 'state' };

export const RING_STATES = ['PENDING', 'UPGRADING', 'SOAKING', 'PASSED', 'FAILED'] as const;
export type RingState = (typeof RING_STATES)[number];

export const ROLLOUT_OS = ['linux', 'mac', 'windows'] as const;
export type RolloutOs = (typeof ROLLOUT_OS)[number];
/** A v-prefixed version per operating system; an OS left out is not upgraded. */
export type VersionByOs = Partial<Record<RolloutOs, string>>;

export const WEEKDAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A ring: named organizations (with their subtrees), or a share of the scope's endpoints by a stable hash of their id. */
export type RingSpec = { orgIds: string[] } | { percent: number };

export interface RingCounts {
  total: number;
  upgraded: number;
  healthy: number;
  failed: number;
  pending: number;
}

/** A ring as the API shows it: what it selects, where it stands, and its counts. */
export interface RingProgress {
  orgIds?: string[];
  percent?: number;
  state: RingState;
  counts: RingCounts;
  /** When its first upgrade commands were sent. */
  startedAt?: string;
  /** When its last held endpoint was sent its command: the soak runs from here. */
  sentAt?: string;
  /** When it passed or failed its gate. */
  judgedAt?: string;
}

export interface RolloutGate {
  /** The share of a ring's judged endpoints that must be healthy after the soak. */
  minHealthyPercent: number;
  /** An endpoint online when its command was sent that has not reported the target version this long after is failed. */
  withinSeconds: number;
}

/** Hours when a customer's endpoints may be upgraded, in its own time zone; `end` before `start` crosses midnight. */
export interface MaintenanceWindow {
  orgId: string;
  days: Weekday[];
  /** HH:MM, local time. */
  start: string;
  /** HH:MM, local time. */
  end: string;
  /** An IANA time zone (Europe/Berlin). */
  timeZone: string;
}

export interface NewRollout {
  name: string;
  orgId: string;
  targetVersion: VersionByOs;
  rings: RingSpec[];
  soakSeconds: number;
  gate: RolloutGate;
  autoRollback: boolean;
  windows?: MaintenanceWindow[];
}

/** An organization's pins before the rollout changed them (restored by a rollback). */
export interface PreviousPins {
  orgId: string;
  linux: string;
  mac: string;
  windows: string;
}

/** The creator's reach, kept so the driver acts (on any instance) as the creator would. */
export interface RolloutCreator {
  role: 'system' | 'admin';
  name: string;
  tokenId?: string;
  orgId?: string;
}

export interface RolloutDoc {
  id: string;
  name: string;
  orgId: string;
  targetVersion: VersionByOs;
  soakSeconds: number;
  gate: RolloutGate;
  autoRollback: boolean;
  windows: MaintenanceWindow[];
  state: RolloutState;
  rings: RingProgress[];
  /** The ring being sent or judged (index into `rings`). */
  currentRing: number;
  /** Why the rollout last changed state ("ring 2: 61 % healthy of 1,204, gate 95 %"). */
  reason?: string;
  /** The pins of organizations before the rollout set them. */
  previousPins: PreviousPins[];
  /** A rollback has sent the previous version to every endpoint the rollout sent a command. */
  rollbackSent?: boolean;
  creator: RolloutCreator;
  leaseHolder?: string;
  leaseExpiresAt?: string;
  createdBy: UserKey;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

/** A rollout as the API shows it. */
export interface Rollout {
  id: string;
  name: string;
  orgId: string;
  targetVersion: VersionByOs;
  rings: RingProgress[];
  soakSeconds: number;
  gate: RolloutGate;
  autoRollback: boolean;
  windows: MaintenanceWindow[];
  state: RolloutState;
  currentRing: number;
  reason?: string;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
  createdBy: UserKey;
  /** Bumped by every write: what a client compares to see that it changed. */
  version: number;
}

/** One endpoint of a rollout: the ring it belongs to and what was sent to it. */
export interface RolloutTargetDoc {
  id: string;
  rolloutId: string;
  endpointId: string;
  orgId: string;
  ring: number;
  os: RolloutOs;
  /** The version it ran when its ring started ('' when it had never reported one). */
  fromVersion: string;
  toVersion: string;
  /** Not CONNECTED when its ring started: pending until it reports, never failed for being away. */
  offlineAtStart: boolean;
  /** HELD until its organization's maintenance window opens, then SENT. */
  state: 'HELD' | 'SENT';
  sentAt?: string;
  /** The previous version was sent back to it. */
  rolledBack?: boolean;
}
