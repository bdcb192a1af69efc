/** LangSmith runs: the bulk data export (Parquet), and the runs `Client.listRuns()` or the CLI return (read.ts). */
import type { Source } from '../source.js';

export const langsmithSource: Source = {
  kind: 'langsmith',
  label: 'LangSmith runs export',
  describesRuns: false,
  // A run names its type beside its trace or its inputs (the Run data format's fields).
  detect: (keys) => keys.includes('run_type') && (keys.includes('trace_id') || keys.includes('dotted_order') || keys.includes('inputs') || keys.includes('parent_run_id')),
  async *read(file) {
    yield* (await import('./read.js')).readLangsmithFile(file);
  },
};
