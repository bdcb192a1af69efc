/** What every command that reads traces shares: finding the files and walking their records. */
import { once } from 'node:events';
import { Option, type Command } from 'commander';
import type { SourceKind } from '../record.js';
import { rootsNamed } from '../sources/no-records.js';
import { UserError } from '../errors.js';
import { discover, SKIPPED_ALOUD, type Discovery, type UnreadableInput } from '../sources/discover.js';
import { SOURCE_KINDS } from '../sources/detect.js';
import { SOURCES } from '../sources/registry.js';
import { plural, printable, printableJson, summaryWidth, wrap } from '../format.js';
import type { ScrubSettings } from '../privacy/scrub.js';

/**
 * Inputs that could not be read in this run. They are reported like damaged lines: named on
 * stderr, listed in --json (`unreadable_inputs`), and the run exits 1 (see cli.ts).
 */
export const unreadableInputs: UnreadableInput[] = [];
/** Files under the roots skipped as not traces in this run: counted in every command's JSON too. */
let skippedFiles = 0;
/** Of those, the ones -v did not list. */
let skippedUnlisted = 0;
/** Hidden folders under the roots not entered (not a recorder's own): said on stderr and counted in every command's JSON. */
let hiddenFolders = 0;

/**
 * The count of files skipped as not traces and not listed, said once when a run ends (see
 * cli.ts): a renamed folder can turn a whole tree into files that are not traces, and a
 * refusal stays the one line it is.
 */
export function skippedNote(): string | null {
  return skippedUnlisted > 0 ? `skipped ${plural(skippedUnlisted, 'file')} that ${skippedUnlisted === 1 ? 'is' : 'are'} not traces (-v lists them)` : null;
}

/** The note said now, by a command whose own last lines must stay last (export's `next: …`): not again at the end. */
export function takeSkippedNote(): string[] {
  const note = skippedNote();
  skippedUnlisted = 0;
  return note === null ? [] : [note];
}

export interface ReadOptions {
  verbose?: boolean;
  /** `--source`: read every file as this format instead of detecting it. */
  source?: SourceKind;
  /**
   * How the paths of files it names are scrubbed (a Synalinks tree names its folders after the
   * program and module): the command's `--scrub`; unset, export's default (secrets).
   */
  names?: ScrubSettings | null;
}

/** The roots argument every reading command takes. */
export const ROOTS_DESCRIPTION = `trace folders or files: Synalinks trees, ${SOURCES.map((source) => source.label + 's').join(', ')} (default: $SYNALINKS_HOME or ~/.synalinks)`;

export function addSourceOption(command: Command): Command {
  return command.addOption(
    new Option('--source <format>', 'read every file as this format instead of telling it from the content').choices([...SOURCE_KINDS]),
  );
}

/** A number as people write one on a command line: digits, a point, an exponent. `Number` also reads `0x10`, `0b1` and blanks. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The value of a numeric option, or one line saying what `flag` expects (`expected`: "a number > 0"). */
export function numberOption(flag: string, text: string, accept: (value: number) => boolean, expected: string): number {
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || !accept(value)) throw new UserError(`${flag} ${JSON.stringify(text)}: expected ${expected}`);
  return value;
}

export function addPricesOption(command: Command): Command {
  return command.option(
    '--prices <file>',
    'price table (JSON, USD per million tokens by provider and model) to estimate costs records do not report (default: the built-in table)',
  );
}

/**
 * The trace files under the roots. Unreadable files and folders are named on stderr; a run
 * that finds none stops there (exit 2), saying where it looked; one that would write (`writes`)
 * says it wrote nothing.
 */
export async function findTraceFiles(roots: readonly string[], options: ReadOptions, writes = false): Promise<Discovery> {
  const discovery = await discover(roots, { source: options.source });
  // Loaded only when a path is to be named: the detectors cost start-up time.
  const shown =
    (discovery.unreadable?.length ?? 0) > 0 || discovery.skipped.length > 0 || (discovery.hidden?.length ?? 0) > 0 ? await shownPaths(options.names) : (file: string) => file;
  for (const found of discovery.unreadable ?? []) {
    const unreadable = { ...found, path: shown(found.path) };
    unreadableInputs.push(unreadable);
    writeSummary(`traces: ${printable(unreadable.path)}: ${unreadable.reason}; its records are not counted (make it readable and rerun)`);
  }
  discovery.where = rootsNamed(roots);
  skippedFiles += discovery.skipped.length;
  const hidden = discovery.hidden ?? [];
  hiddenFolders += hidden.length;
  if (hidden.length > 0) {
    const named = hidden.slice(0, 3).map((folder) => printable(shown(folder))).join(', ');
    writeSummary(`traces: ${plural(hidden.length, 'hidden folder')} not entered (${named}${hidden.length > 3 ? ', …' : ''}): name one to read it`);
  }
  if (options.verbose) {
    for (const skipped of discovery.skipped) writeSummary(`skipped ${printable(shown(skipped.path))}: ${skipped.reason}`);
    writeSummary(`${plural(discovery.files.length, 'trace file')}, ${plural(discovery.skipped.length, 'other file')} skipped`);
  } else {
    // A file named on the command line that no reader knows, or a compressed trace file, is worth saying, not failing over.
    for (const skipped of discovery.skipped) {
      if (SKIPPED_ALOUD.test(skipped.reason)) writeSummary(`traces: skipped ${printable(shown(skipped.path))}: ${skipped.reason}`);
    }
    skippedUnlisted += discovery.skipped.length;
  }
  // Said last, after what was skipped and why: the reason there is nothing to read.
  if (discovery.files.length === 0) {
    const why = `no trace file found under ${discovery.where}${discovery.skipped.length > 0 ? ` (${plural(discovery.skipped.length, 'other file')} skipped; -v lists them)` : ''}`;
    // Nothing to read is no success: a table of zeros, an empty dataset, exit 0 would read as one.
    // Files that could not be read are the problem the run found (exit 1, as with records read beside them).
    throw new UserError(writes ? `${why}: nothing written` : why, !writes && (discovery.unreadable?.length ?? 0) > 0 ? 1 : 2);
  }
  return discovery;
}

/** File paths as a command names them: scrubbed by its `--scrub` (`names`; undefined: secrets), folder by folder. */
async function shownPaths(names: ScrubSettings | null | undefined): Promise<(file: string) => string> {
  const { scrubbedPath, SECRETS_SCRUB } = await import('../privacy/scrub.js');
  const scrub = names === undefined ? SECRETS_SCRUB : names;
  return (file) => scrubbedPath(file, scrub);
}

/**
 * Every command's JSON object names the inputs it could not read, as it counts damaged lines,
 * and counts the files skipped as not traces.
 */
export function withInputsReport<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  let extended = value;
  if (unreadableInputs.length > 0) extended = { ...extended, unreadable_inputs: unreadableInputs };
  if (skippedFiles > 0) extended = { ...extended, skipped_not_traces: skippedFiles };
  if (hiddenFolders > 0) extended = { ...extended, hidden_folders_not_entered: hiddenFolders };
  return extended;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${printableJson(JSON.stringify(withInputsReport(value), null, 2))}\n`);
}

/**
 * Lines a person reads (a command's summary, its notes), wrapped to the width a summary takes
 * (`summaryWidth`: 80 unless a wider terminal) without cutting a word. JSON is never wrapped.
 */
export function writeSummary(lines: string | readonly string[], stream: NodeJS.WriteStream = process.stderr): void {
  const text = typeof lines === 'string' ? lines.replace(/\n$/, '') : lines.join('\n');
  stream.write(`${wrap(text, summaryWidth(stream))}\n`);
}

/** Writes to stdout, waiting while the reader is behind: output never piles up in memory. */
export async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/**
 * A JSON array on stdout, as `printJson` prints one, byte for byte, written a megabyte at a
 * time as its items come: a listing of a big tree (all its runs, every row of a query) never
 * becomes one string of a hundred megabytes. `margin` is the indent of the line the array
 * starts on: '' at the top, more inside an object (see `printJsonWithList`).
 */
export class JsonArrayOut {
  private chunk = '';
  private count = 0;

  constructor(private readonly margin = '') {}

  /** An item, as printJson writes it. */
  async add(item: unknown): Promise<void> {
    await this.addText(JSON.stringify(item, null, 2));
  }

  /** An item's JSON text: one line, or printJson's lines. */
  async addText(text: string): Promise<void> {
    const indent = `${this.margin}  `;
    // Raw newlines only separate JSON lines (inside strings they are escaped), so indenting them is safe.
    this.chunk += `${this.count++ === 0 ? '[\n' : ',\n'}${indent}${text.replaceAll('\n', `\n${indent}`)}`;
    if (this.chunk.length >= 1 << 20) await this.flush();
  }

  /** Closes the array, then writes `after`: a top-level array's newline, or the rest of the object around it. */
  async end(after = '\n'): Promise<void> {
    this.chunk += this.count === 0 ? `[]${after}` : `\n${this.margin}]${after}`;
    await this.flush();
  }

  private async flush(): Promise<void> {
    const chunk = this.chunk;
    this.chunk = '';
    await writeOut(printableJson(chunk));
  }
}

/**
 * `printJson(value)` with the list `value[key]` given as the JSON lines of `items`, written
 * as they are read, so the list never waits whole in memory. `pretty` prints each item as
 * printJson would; otherwise one item a line.
 */
export async function printJsonWithList(value: Record<string, unknown>, key: string, items: AsyncIterable<string>, pretty: boolean): Promise<void> {
  const whole = withInputsReport(value);
  const names = Object.keys(whole);
  const at = names.indexOf(key);
  // The members before and after the list, as printJson indents them, without the braces.
  const members = (some: string[]) => JSON.stringify(Object.fromEntries(some.map((name) => [name, whole[name]])), null, 2).slice(2, -2);
  const head = members(names.slice(0, at));
  const tail = members(names.slice(at + 1));
  await writeOut(printableJson(`{\n${head}${head === '' ? '' : ',\n'}  ${JSON.stringify(key)}: `));
  const list = new JsonArrayOut('  ');
  for await (const line of items) await list.addText(pretty ? JSON.stringify(JSON.parse(line), null, 2) : line);
  await list.end(`${tail === '' ? '' : `,\n${tail}`}\n}\n`);
}

/** `printJson(items.map(toJson))`, byte for byte, a megabyte at a time (see JsonArrayOut). */
export async function printJsonArray<T>(items: readonly T[], toJson: (item: T) => unknown): Promise<void> {
  const out = new JsonArrayOut();
  for (const item of items) await out.add(toJson(item));
  await out.end();
}
