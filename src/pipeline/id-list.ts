/**
 * Lists of call_ids read from files (`--exclude`, and any other flag naming records by id),
 * and the accounting a user needs to trust them: which listed ids the run never met (a typo,
 * another tree, an id already deleted) and which lines cannot be an id at all.
 *
 * File format: one call_id per line; `#` starts a comment; blank lines are ignored.
 */
import { existsSync, readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { formatCount, plural } from '../format.js';

/** Where a listed id was read. */
export interface ListedId {
  id: string;
  file: string;
  line: number;
}

/** How many ids of each fate a summary names before saying "…". */
export const NAMED_IN_SUMMARY = 3;

export interface IdListReport {
  listed: number;
  met: number;
  /** Ids no record of the run carries. */
  not_found: number;
  not_found_ids: ListedId[];
  /** Lines that cannot be a call_id (spaces, quotes, commas, brackets, control characters). */
  malformed: number;
  malformed_lines: ListedId[];
}

/**
 * An id as a recorder writes it has no spaces, quotes, separators or brackets: Synalinks and
 * Ask ids are UUIDs, klieo's are `<run_id>:<step>`. A line holding any of these is a pasted
 * list, a JSON fragment or a line of some other file.
 */
const NOT_IN_AN_ID = /[\s"'`,;{}[\]<>\p{Cc}]/u;
const LONGEST_ID = 256;

export function isWellFormedId(id: string): boolean {
  return id.length <= LONGEST_ID && !NOT_IN_AN_ID.test(id);
}

export class IdList {
  private readonly listed = new Map<string, ListedId>();
  private readonly met = new Set<string>();
  private readonly malformedLines: ListedId[] = [];

  /** Adds one line's id; a malformed one is set aside (no record can carry it). */
  add(entry: ListedId, malformed = !isWellFormedId(entry.id)): void {
    if (malformed) this.malformedLines.push(entry);
    else if (!this.listed.has(entry.id)) this.listed.set(entry.id, entry);
  }

  get size(): number {
    return this.listed.size;
  }

  has(id: string): boolean {
    return this.listed.has(id);
  }

  /** Whether `id` is listed, noting that the run met it. */
  meet(id: string): boolean {
    if (!this.listed.has(id)) return false;
    this.met.add(id);
    return true;
  }

  /** Listed ids the run has not met, in file order. */
  notFound(): ListedId[] {
    return [...this.listed.values()].filter((entry) => !this.met.has(entry.id));
  }

  report(): IdListReport {
    const notFound = this.notFound();
    return {
      listed: this.listed.size,
      met: this.met.size,
      not_found: notFound.length,
      not_found_ids: notFound,
      malformed: this.malformedLines.length,
      malformed_lines: [...this.malformedLines],
    };
  }

  /** Lines for stderr, empty when every listed id was met: `--exclude: 2 of 9 call_ids not found in these records: a, b`. */
  describe(flag: string): string[] {
    const report = this.report();
    const lines: string[] = [];
    const some = (entries: ListedId[], show: (entry: ListedId) => string) =>
      entries.slice(0, NAMED_IN_SUMMARY).map(show).join(', ') + (entries.length > NAMED_IN_SUMMARY ? `, … (${formatCount(entries.length - NAMED_IN_SUMMARY)} more)` : '');
    if (report.not_found > 0) {
      lines.push(
        `${flag}: ${formatCount(report.not_found)} of ${plural(report.listed, 'listed call_id')} not found in these records: ` +
          some(report.not_found_ids, (e) => e.id),
      );
    }
    if (report.malformed > 0) {
      lines.push(
        `${flag}: ${plural(report.malformed, 'line')} that cannot be a call_id (one per line or Parquet row; # comments in text lists), ignored: ` +
          some(report.malformed_lines, (e) => `${e.file}:${e.line} ${JSON.stringify(e.id.length > 60 ? `${e.id.slice(0, 60)}…` : e.id)}`),
      );
    }
    return lines;
  }
}

/** The ids of an id list's text, with their line numbers: one per line, `#` starts a comment anywhere, blank lines ignored. */
export function idsOfText(text: string): { id: string; line: number }[] {
  const ids: { id: string; line: number }[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const id = raw.replace(/#.*/, '').trim();
    if (id !== '') ids.push({ id, line: index + 1 });
  });
  return ids;
}

/** The text of an id file a flag names, or a UserError saying why it cannot be read. */
export function readIdFileText(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(`${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Reads the id files one flag names (the flag may repeat) into one list. */
export function readIdListFiles(flag: string, files: readonly string[], list = new IdList()): IdList {
  for (const file of files) {
    if (!existsSync(file)) throw new UserError(`${flag} ${file}: no such file`);
    for (const { id, line } of idsOfText(readIdFileText(flag, file))) list.add({ id, file, line });
  }
  return list;
}

/**
 * What a record's call_id looks like, in words, from one of them: the form a list must use to
 * meet records (an OTLP span's is `<trace id>:<span id>`, a klieo step's `<run_id>:<step>`).
 */
export function idFormOf(sample: string | null): string {
  if (sample === null) return 'nothing (no record was read)';
  const shown = JSON.stringify(sample.length > 80 ? `${sample.slice(0, 80)}…` : sample);
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sample)) return `uuids such as ${shown}`;
  if (/^[0-9a-f]{32}:[0-9a-f]{16}$/i.test(sample)) return `<trace id>:<span id> (an OTLP span's, in hex) such as ${shown}`;
  if (/^.+:\d+$/.test(sample)) return `<run_id>:<step> such as ${shown}`;
  return shown;
}
