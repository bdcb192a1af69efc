/** The Hugging Face Hub's Session Traces Format: a `session` header line, then one `message` line each (read.ts). */
import type { Source } from '../source.js';

export const stsSource: Source = {
  kind: 'sts',
  label: 'Session Traces Format file',
  describesRuns: true,
  // The header: `{"type":"session","harness":…,"id":…}`.
  detect: (keys) => keys.includes('type') && keys.includes('harness') && keys.includes('id'),
  async *read(file) {
    yield* (await import('./read.js')).readStsFile(file);
  },
};
