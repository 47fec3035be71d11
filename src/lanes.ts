/** The admission lanes' names, in priority order (a leaf: the settings and the HTTP layer both read them). */
export const LANES = ['agent', 'checkin', 'report', 'admin', 'interactive', 'heavy'] as const;
export type Lane = (typeof LANES)[number];

/** The lanes of agents' telemetry: their short writes and their bulk reports (counted, not audited). */
export const TELEMETRY_LANES: ReadonlySet<Lane> = new Set<Lane>(['agent', 'report']);

/**
 * An agent sent away by a stopping instance is told a Retry-After drawn from this range
 * (seconds), so the agents of a stopped instance come back spread over it instead of all at
 * once (docs/adr/0113-agent-channel.md). A check-in shed by a full lane is booked its own
 * return instead (src/http/return-schedule.ts, docs/adr/0127).
 */
export const CHECKIN_RETRY_AFTER_SECONDS = { min: 1, max: 10 } as const;
