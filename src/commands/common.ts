/** What every command that reads traces shares: finding the files and walking their records. */
import { discover, type Discovery } from '../sources/discover.js';
import { readFiles, type RecordBatch } from '../sources/read.js';
import { Progress } from '../progress.js';

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

/** Record batches of all files, with progress drawn as they pass. */
export async function* withProgress(discovery: Discovery): AsyncGenerator<RecordBatch> {
  const progress = new Progress(discovery.files.length);
  let currentFile: string | null = null;
  try {
    for await (const batch of readFiles(discovery.files)) {
      if (batch.file.path !== currentFile) {
        currentFile = batch.file.path;
        progress.files++;
      }
      progress.records += batch.records.length;
      progress.bytes += batch.bytes;
      progress.tick();
      yield batch;
    }
  } finally {
    progress.done();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
