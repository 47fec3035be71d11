/**
 * Which ring an endpoint belongs to, and whether its customer's maintenance window is open.
 * Pure functions: the same answer on every instance and after a restart.
 */
import crypto from 'node:crypto';
import type { MaintenanceWindow, RingSpec, Weekday } from './model.js';

/** Buckets of the stable hash: a percent ring takes the buckets below percent × 100. */
const BUCKETS = 10_000;

/** The endpoint's place in 0..9999, from a hash of its id alone (stable across instances and restarts). */
export function hashBucket(endpointId: string): number {
  return crypto.createHash('sha256').update(endpointId).digest().readUInt32BE(0) % BUCKETS;
}

/**
 * The first ring that takes an endpoint, or -1: an organization ring takes the endpoints of
 * its organizations and their subtrees; a percent ring takes those whose bucket is below its
 * share. Each ring adds to the ones before it, so an endpoint belongs to the first that takes it.
 */
export function ringOf(rings: readonly RingSpec[], endpointId: string, orgPath: readonly string[]): number {
  let bucket: number | undefined;
  for (let i = 0; i < rings.length; i++) {
    const r = rings[i];
    if ('orgIds' in r) {
      if (r.orgIds.some((o) => orgPath.includes(o))) return i;
    } else {
      bucket ??= hashBucket(endpointId);
      if (bucket < r.percent * (BUCKETS / 100)) return i;
    }
  }
  return -1;
}

const WEEKDAY_OF: Record<string, Weekday> = { Mon: 'MON', Tue: 'TUE', Wed: 'WED', Thu: 'THU', Fri: 'FRI', Sat: 'SAT', Sun: 'SUN' };
const DAY_ORDER: readonly Weekday[] = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day at `at` in `timeZone`. */
export function localTime(at: Date, timeZone: string): { day: Weekday; minute: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(at).map((p) => [p.type, p.value]));
  return { day: WEEKDAY_OF[parts.weekday] ?? 'MON', minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** True when `timeZone` is one the runtime knows (IANA). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** True when the window is open at `at`; a window whose end is before its start runs past midnight into the next day. */
export function windowOpen(w: MaintenanceWindow, at: Date): boolean {
  const { day, minute } = localTime(at, w.timeZone);
  const start = minutes(w.start);
  const end = minutes(w.end);
  if (start === end) return w.days.includes(day);
  if (start < end) return w.days.includes(day) && minute >= start && minute < end;
  const yesterday = DAY_ORDER[(DAY_ORDER.indexOf(day) + 6) % 7];
  return (w.days.includes(day) && minute >= start) || (w.days.includes(yesterday) && minute < end);
}

/**
 * Whether an endpoint may be sent its command at `at`: true when no window names its
 * organization or an ancestor, else when one of the windows of the nearest such organization is open.
 */
export function mayUpgrade(windows: readonly MaintenanceWindow[], orgPath: readonly string[], at: Date): boolean {
  if (windows.length === 0) return true;
  for (let i = orgPath.length - 1; i >= 0; i--) {
    const own = windows.filter((w) => w.orgId === orgPath[i]);
    if (own.length > 0) return own.some((w) => windowOpen(w, at));
  }
  return true;
}
