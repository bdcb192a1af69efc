/** Codex CLI sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (read.ts). */
import type { Source } from '../source.js';

export const codexSource: Source = {
  kind: 'codex',
  label: 'Codex session',
  describesRuns: true,
  versionOf: 'codex',
  homeFolders: ['.codex/sessions', '.codex/archived_sessions'],
  // Every line is `{timestamp, type, payload}`; the first is the `session_meta`.
  detect: (keys, head) => keys.includes('payload') && keys.includes('type') && head.includes('"session_meta"'),
  async *read(file) {
    yield* (await import('./read.js')).readCodexFile(file);
  },
};
