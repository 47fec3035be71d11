/** The admission lanes' names, in priority order (a leaf: the settings and the HTTP layer both read them). */
export const LANES = ['agent', 'checkin', 'admin', 'interactive', 'heavy'] as const;
export type Lane = (typeof LANES)[number];

/**
 * A shed check-in's Retry-After is drawn from this range (seconds): the agents of a stopped
 * instance come back spread over it instead of all at once (docs/adr/0113-agent-channel.md).
 */
export const CHECKIN_RETRY_AFTER_SECONDS = { min: 1, max: 10 } as const;

/** Seconds a shed request of `lane` is advised to wait: `otherwise` for every lane but the check-in's spread. */
export function shedRetryAfterSeconds(lane: Lane, otherwise: number): number {
  if (lane !== 'checkin') return otherwise;
  const { min, max } = CHECKIN_RETRY_AFTER_SECONDS;
  return min + Math.floor(Math.random() * (max - min + 1));
}
