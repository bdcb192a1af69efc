/** pi (`@mariozechner/pi-coding-agent`) sessions: `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl` (read.ts). */
import type { Source } from '../source.js';

export const piSource: Source = {
  kind: 'pi',
  label: 'pi session',
  describesRuns: true,
  homeFolders: ['.pi/agent/sessions'],
  // The header line: `{"type":"session","version":3,"id","timestamp","cwd"}` (a `harness` added
  // by another tool writing pi's format does not make it a Session Traces Format file).
  detect: (keys) => keys.includes('type') && keys.includes('cwd') && keys.includes('id') && (keys.includes('version') || keys.includes('timestamp')),
  async *read(file) {
    yield* (await import('./read.js')).readPiFile(file);
  },
};
