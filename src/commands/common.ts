/** What every command that reads traces shares: finding the files and walking their records. */
import { discover, type Discovery } from '../sources/discover.js';

export interface ReadOptions {
  verbose?: boolean;
}

export async function findTraceFiles(roots: readonly string[], options: ReadOptions): Promise<Discovery> {
  const discovery = await discover(roots);
  if (options.verbose) {
    for (const skipped of discovery.skipped) process.stderr.write(`skipped ${skipped.path}: ${skipped.reason}\n`);
    process.stderr.write(`${discovery.files.length} trace files, ${discovery.skipped.length} other files skipped\n`);
  }
  return discovery;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
