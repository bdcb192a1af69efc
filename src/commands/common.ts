/** What every command that reads traces shares: finding the files and walking their records. */
import { once } from 'node:events';
import { Option, type Command } from 'commander';
import type { SourceKind } from '../record.js';
import { discover, type Discovery } from '../sources/discover.js';
import { SOURCE_KINDS } from '../sources/detect.js';

export interface ReadOptions {
  verbose?: boolean;
  /** `--source`: read every file as this format instead of detecting it. */
  source?: SourceKind;
}

/** The roots argument every reading command takes. */
export const ROOTS_DESCRIPTION =
  'trace folders or files: Synalinks trees, Ask recordings (<dir>/<test>/recording.yml|json), klieo RunLog or Capture JSON (default: $SYNALINKS_HOME or ~/.synalinks)';

export function addSourceOption(command: Command): Command {
  return command.addOption(
    new Option('--source <format>', 'read every file as this format instead of telling it from the content').choices([...SOURCE_KINDS]),
  );
}

export function addPricesOption(command: Command): Command {
  return command.option(
    '--prices <file>',
    'price table (JSON, USD per million tokens by provider and model) to estimate costs records do not report (default: the built-in table)',
  );
}

export async function findTraceFiles(roots: readonly string[], options: ReadOptions): Promise<Discovery> {
  const discovery = await discover(roots, { source: options.source });
  if (options.verbose) {
    for (const skipped of discovery.skipped) process.stderr.write(`skipped ${skipped.path}: ${skipped.reason}\n`);
    process.stderr.write(`${discovery.files.length} trace files, ${discovery.skipped.length} other files skipped\n`);
  } else {
    // A file named on the command line that no reader knows is worth saying, not failing over.
    for (const skipped of discovery.skipped) {
      if (skipped.reason.startsWith('no known recorder format')) process.stderr.write(`traces: skipped ${skipped.path}: ${skipped.reason}\n`);
    }
  }
  return discovery;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * `printJson(items.map(toJson))`, byte for byte, written a megabyte at a time: a listing of a
 * big tree (all its runs) never becomes one string of a hundred megabytes.
 */
export async function printJsonArray<T>(items: readonly T[], toJson: (item: T) => unknown): Promise<void> {
  if (items.length === 0) {
    process.stdout.write('[]\n');
    return;
  }
  let chunk = '[\n';
  for (let i = 0; i < items.length; i++) {
    // Raw newlines only separate JSON lines (inside strings they are escaped), so indenting them is safe.
    chunk += `  ${JSON.stringify(toJson(items[i]!), null, 2).replaceAll('\n', '\n  ')}${i + 1 < items.length ? ',\n' : '\n]\n'}`;
    if (chunk.length >= 1 << 20 || i + 1 === items.length) {
      if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
      chunk = '';
    }
  }
}
