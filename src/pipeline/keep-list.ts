/**
 * Lists of call_ids given to curation (`--keep-list`): read from a text file or from the
 * `call_id` column of a Parquet file an engine wrote, and checked off as records are read,
 * so the ids that matched no record are counted and reported, never silently ignored.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { UserError } from '../errors.js';

/** call_ids, one per line; `#` starts a comment; blank lines are skipped. */
export function parseIdLines(text: string): string[] {
  const ids: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const id = line.replace(/#.*/, '').trim();
    if (id !== '') ids.push(id);
  }
  return ids;
}

/** A set of call_ids that remembers which ones a record carried. */
export class CallIdList {
  private readonly ids: Set<string>;
  private readonly found = new Set<string>();

  constructor(
    ids: Iterable<string>,
    /** Where the ids came from, for reports. */
    readonly origin: string,
  ) {
    this.ids = new Set(ids);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Whether `callId` is listed; a listed id counts as found from then on. */
  check(callId: string): boolean {
    if (!this.ids.has(callId)) return false;
    this.found.add(callId);
    return true;
  }

  /** Listed ids no record carried, in list order: the first `limit`, and how many in all. */
  notFound(limit = 20): { count: number; first: string[] } {
    const first: string[] = [];
    let count = 0;
    for (const id of this.ids) {
      if (this.found.has(id)) continue;
      count++;
      if (first.length < limit) first.push(id);
    }
    return { count, first };
  }

  /** The line a command writes on stderr when ids were not found (none when all were). */
  notFoundLines(flag: string): string[] {
    const { count, first } = this.notFound(3);
    if (count === 0) return [];
    return [`${flag} ${this.origin}: ${count.toLocaleString('en-US')} of ${this.size.toLocaleString('en-US')} listed call_id${this.size === 1 ? '' : 's'} matched no record read (${first.join(', ')}${count > first.length ? ', …' : ''})`];
  }

  /** For --json reports. */
  toJSON(): Record<string, unknown> {
    const { count, first } = this.notFound();
    return { file: this.origin, listed: this.size, found: this.size - count, not_found: count, not_found_first: first };
  }
}

const PARQUET_MAGIC = 'PAR1';

function startsWithParquetMagic(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.toString('latin1') === PARQUET_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** A keep-list file: Parquet (told by its first bytes) with a call_id column, else text. */
export async function readKeepList(file: string, flag = '--keep-list'): Promise<CallIdList> {
  if (!existsSync(file)) throw new UserError(`${flag} ${file}: no such file`);
  if (startsWithParquetMagic(file)) {
    // The engine loads only for Parquet lists: text lists cost nothing at start-up.
    const { readCallIds } = await import('../engine/duckdb.js');
    return new CallIdList(await readCallIds(file), file);
  }
  const text = readFileSync(file, 'utf8');
  if (text.includes('\0')) throw new UserError(`${flag} ${file}: neither a text list of call_ids nor a Parquet file`);
  return new CallIdList(parseIdLines(text), file);
}
