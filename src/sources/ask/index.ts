/** Ask (Ruby) recordings: `{"test", "recorded_at", "interactions": [...]}` (read.ts). */
import type { Source } from '../source.js';

export const askSource: Source = {
  kind: 'ask',
  label: 'Ask recording',
  describesRuns: true,
  detect: (keys) => keys.includes('interactions') || (keys.includes('test') && keys.includes('recorded_at')),
  async *read(file) {
    yield* (await import('./read.js')).readAskFile(file);
  },
};
