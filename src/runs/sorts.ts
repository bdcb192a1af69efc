/** How `traces runs` can order runs: known at start-up, apart from the grouping code. */
export const RUN_SORTS = ['start', 'cost', 'tokens', 'duration'] as const;
export type RunSort = (typeof RUN_SORTS)[number];
