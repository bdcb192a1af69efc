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
 *
 * The heap's growth: after each full collection V8 lets the old generation grow to its live
 * size times a factor it picks from how fast collection is against the program, up to 4 on a
 * machine of this memory. Our threads keep 30 to 100 MB live, collect fast, and so got close
 * to 4: heap snapshots of export on the 1 GB bench tree held 36 MB live in the worker against
 * a heap of 125 MB, and dead buffers waiting for that collection doubled the external memory.
 * See HEAP_GROWING_PERCENT for the figures.
 *
 * A value the user sets (node's flags or NODE_OPTIONS) is kept for either.
 */
import v8 from 'node:v8';

const INLINING_BUDGET = '--max-inlined-bytecode-size-cumulative';
const HEAP_GROWING = '--heap-growing-percent';
/**
 * The old generation may double between full collections (V8 reads it at each collection, so
 * it holds for this thread, already running, and every worker). Export on the 200 MB bench
 * tree, two threads, three runs each, interleaved: V8's own factor 367-404 MB peak RSS and
 * 11.67 s of CPU (median); 100: 291-294 MB, 11.76 s; 50: 259-291 MB, 12.33 s (5% more CPU
 * for 15 MB). See docs/performance.md ("Export in flat memory").
 */
const HEAP_GROWING_PERCENT = 100;

/**
 * The flags to set, given node's own flags and NODE_OPTIONS: each of ours the user has not set
 * (V8 takes a flag with dashes or underscores).
 */
export function tuningFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
  const isGiven = (flag: string): boolean => given.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
  return [
    ...(isGiven(INLINING_BUDGET) ? [] : [`${INLINING_BUDGET}=200`]),
    ...(isGiven(HEAP_GROWING) ? [] : [`${HEAP_GROWING}=${HEAP_GROWING_PERCENT}`]),
  ];
}

for (const flag of tuningFlags(process.execArgv, process.env.NODE_OPTIONS)) v8.setFlagsFromString(flag);
