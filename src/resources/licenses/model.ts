/** Spec 2.5 licenses and the LicenseInfo state machine (spec 3 gives no transitions; designed here). */

export const LICENSE_TYPES = ['ATC', 'BDHL', 'DCI'] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];

export const LICENSE_STATES = ['CREATED', 'ACTIVATED', 'REVOKED', 'DEACTIVATED', 'EXPIRED'] as const;
export type LicenseState = (typeof LICENSE_STATES)[number];

/** LicenseInfo (spec 2.5). */
export interface LicenseInfo {
  id: string;
  state: LicenseState;
  type: LicenseType;
  creationDate: string;
  activationDate?: string;
  expirationDate?: string;
  lastActiveDate?: string;
  revocationDate?: string;
  deactivationDate?: string;
  orgId: string;
  ownerId?: string;
  daysInactiveBeforeDeactivation?: number;
  version: number;
}

/** The stored document is the record itself (`version` kept equal to `_version` so criteria can match it). */
export type LicenseDoc = LicenseInfo;

/** The state-stamped dates of a license. */
export type LicenseDates = Pick<
  LicenseInfo,
  'activationDate' | 'deactivationDate' | 'revocationDate' | 'expirationDate' | 'lastActiveDate'
>;

/**
 * Allowed moves: CREATED → ACTIVATED; ACTIVATED → DEACTIVATED, REVOKED, EXPIRED;
 * DEACTIVATED → ACTIVATED, REVOKED; REVOKED and EXPIRED are final. Anything else,
 * including a move to the same state, conflicts.
 */
export const LICENSE_TRANSITIONS: Readonly<Record<LicenseState, readonly LicenseState[]>> = {
  CREATED: ['ACTIVATED'],
  ACTIVATED: ['DEACTIVATED', 'REVOKED', 'EXPIRED'],
  DEACTIVATED: ['ACTIVATED', 'REVOKED'],
  REVOKED: [],
  EXPIRED: [],
};

/** The state a new license starts in. */
export const INITIAL_LICENSE_STATE: LicenseState = 'CREATED';

export function canTransition(from: LicenseState, to: LicenseState): boolean {
  return LICENSE_TRANSITIONS[from].includes(to);
}

/** The dates a move to `to` stamps with `now` (activation also stamps lastActiveDate). */
export function transitionStamps(to: LicenseState, now: string): LicenseDates {
  switch (to) {
    case 'ACTIVATED':
      return { activationDate: now, lastActiveDate: now };
    case 'DEACTIVATED':
      return { deactivationDate: now };
    case 'REVOKED':
      return { revocationDate: now };
    case 'EXPIRED':
      return { expirationDate: now };
    case 'CREATED':
      return {};
  }
}
