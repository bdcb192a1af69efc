/**
 * V8 settings for how traces runs, applied before any of its code is hot. Imported first by
 * the executable (bin/traces.js), so they hold in every worker thread too (V8 flags belong to
 * the process).
 *
 * The inlining budget: V8 inlines up to 920 bytes of bytecode into an optimized function by
 * default. The reading loop (line splitting, the strict JSON scan, field location) inlines
 * into a few very large functions whose optimizing compiles took 50-115 ms each, several
 * times over as type feedback grew, and on 2 cores two threads' compiles compete with the
 * threads themselves. A budget of 200 makes those compiles smaller and the code no slower:
 * `stats` on the 200 MB bench tree went from 1.35 to 1.25 s (median of 5, interleaved),
 * `dedupe` 1.38 to 1.33 s, `export` 7.14 to 7.00 s, `verify` and `stats` on 1 GB unchanged.
 * A budget the user sets (node's flags or NODE_OPTIONS) is kept.
 */
import v8 from 'node:v8';

const INLINING_BUDGET = '--max-inlined-bytecode-size-cumulative';

const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((flag) => flag.startsWith(INLINING_BUDGET));
if (!given) v8.setFlagsFromString(`${INLINING_BUDGET}=200`);
