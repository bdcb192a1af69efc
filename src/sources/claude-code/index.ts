/** Claude Code sessions: `~/.claude/projects/<project>/<session>.jsonl` (read.ts). */
import type { Source } from '../source.js';

export const claudeCodeSource: Source = {
  kind: 'claude-code',
  label: 'Claude Code session',
  describesRuns: true,
  versionOf: 'claude-code',
  homeFolders: ['.claude/projects'],
  // Its first line: a user or assistant entry (`parentUuid`), a summary (`leafUuid`), a queue
  // operation or a file-history snapshot, each naming its session or message.
  detect: (keys) =>
    keys.includes('parentUuid') ||
    keys.includes('leafUuid') ||
    (keys.includes('type') && keys.includes('sessionId') && (keys.includes('operation') || keys.includes('uuid'))) ||
    (keys.includes('type') && keys.includes('messageId') && keys.includes('snapshot')),
  async *read(file) {
    yield* (await import('./read.js')).readClaudeCodeFile(file);
  },
};
