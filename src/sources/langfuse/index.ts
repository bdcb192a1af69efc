/** Langfuse observations: the blob-storage export, the UI's export, the public API's pages (read.ts). */
import type { Source } from '../source.js';

/** An observation names its trace and its parent, in the export's snake_case or the API's camelCase. */
function observationKeys(keys: readonly string[]): boolean {
  return keys.includes('type') && ((keys.includes('trace_id') && keys.includes('parent_observation_id')) || (keys.includes('traceId') && keys.includes('parentObservationId')));
}

export const langfuseSource: Source = {
  kind: 'langfuse',
  label: 'Langfuse observations export',
  describesRuns: false,
  detect: (keys, head) =>
    observationKeys(keys) ||
    // An API page, `{data: [observations], meta}`: the first observation's keys are inside `data`.
    (keys[0] === 'data' && /"parentObservationId"\s*:/.test(head.subarray(0, 16 * 1024).toString('utf8'))),
  async *read(file) {
    yield* (await import('./read.js')).readLangfuseFile(file);
  },
};
