/** The admission lanes' names, in priority order (a leaf: the settings and the HTTP layer both read them). */
export const LANES = ['agent', 'admin', 'interactive', 'heavy'] as const;
export type Lane = (typeof LANES)[number];
