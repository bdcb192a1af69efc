/** klieo (Rust) RunLog and Capture JSON (read.ts). */
import type { Source } from '../source.js';

export const klieoSource: Source = {
  kind: 'klieo',
  label: 'klieo run',
  describesRuns: true,
  detect: (keys) =>
    keys.includes('run_log') ||
    keys.includes('llm_io') ||
    (keys.includes('run_id') && (keys.includes('steps') || keys.includes('agent') || keys.includes('status'))) ||
    // A head cut inside the first value still shows the first key.
    (keys.length === 1 && keys[0] === 'steps'),
  async *read(file) {
    yield* (await import('./read.js')).readKlieoFile(file);
  },
};
