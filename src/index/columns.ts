/**
 * The record index: one row per record, its columns and their types. Written by `traces
 * index`, queried by `traces sql`, and read by any engine that reads Parquet. The README's
 * "Beyond one machine" documents the same columns; a test reads them back with DuckDB.
 */

export type IndexColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN';

export interface IndexColumn {
  name: string;
  type: IndexColumnType;
  /** Null never appears in this column. */
  notNull: boolean;
}

const column = (name: string, type: IndexColumnType, notNull: boolean): IndexColumn => ({ name, type, notNull });

export const INDEX_COLUMNS: readonly IndexColumn[] = [
  column('call_id', 'VARCHAR', true),
  column('parent_call_id', 'VARCHAR', false),
  /** synalinks, ask or klieo. */
  column('source', 'VARCHAR', true),
  /** The root folder the file was found under (absolute). */
  column('root', 'VARCHAR', true),
  /** Relative to `root`, with `/` separators. */
  column('file', 'VARCHAR', true),
  /** 1-based line (Synalinks), or position of the call in its file (Ask, klieo). */
  column('line', 'INTEGER', true),
  /** Byte offset and length of the trace line (Synalinks); null for Ask and klieo, whose calls are not lines. */
  column('offset', 'BIGINT', false),
  column('length', 'BIGINT', false),
  column('program', 'VARCHAR', true),
  column('module', 'VARCHAR', true),
  column('model', 'VARCHAR', false),
  column('synalinks_version', 'VARCHAR', false),
  /** ok, exception or no_output. */
  column('status', 'VARCHAR', true),
  /** Epoch seconds. */
  column('timestamp', 'DOUBLE', false),
  /** Seconds. */
  column('duration', 'DOUBLE', false),
  column('inputs_hash', 'VARCHAR', true),
  column('config_hash', 'VARCHAR', true),
  /** The `--key conversation` digest (32 hex digits). */
  column('conversation_hash', 'VARCHAR', true),
  /** Null when usage is unknown (not recorded, or stale as on records without output). */
  column('prompt_tokens', 'BIGINT', false),
  column('completion_tokens', 'BIGINT', false),
  column('reasoning_tokens', 'BIGINT', false),
  column('cached_tokens', 'BIGINT', false),
  column('total_tokens', 'BIGINT', false),
  /** USD, reported or estimated from the price table; null when unknown, never 0 for unknown. */
  column('cost_usd', 'DOUBLE', false),
  /** reported or estimated; null with cost_usd. */
  column('cost_source', 'VARCHAR', false),
  /** Number of messages, the completion included. */
  column('messages', 'INTEGER', true),
  column('has_tool_calls', 'BOOLEAN', true),
];

export type IndexValue = string | number | boolean | null;

/**
 * Rows of one share as CSV text (UTF-8, every string quoted, null an empty unquoted field),
 * which the engine reads in its own threads: one block crosses threads, not a value per cell,
 * and no JS thread appends values one by one.
 */
export interface IndexBatch {
  rows: number;
  csv: Uint8Array;
  /** The byte offset where each row ends, so a batch can be cut between rows. */
  rowEnds: Uint32Array;
}

const QUOTE = /"/g;

/** A cell as CSV text: numbers in their shortest exact form, which the engine parses back to the same double. */
function cell(value: IndexValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return value.includes('"') ? `"${value.replace(QUOTE, '""')}"` : `"${value}"`;
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return value ? 'true' : 'false';
}

/**
 * The bytes a finished batch was built in, for the next one in this thread: a new buffer grown
 * by doubling for every share cost more in page faults than the rows cost to copy.
 */
let spare: Buffer | null = null;

/** Builds an IndexBatch row by row. */
export class IndexBatchWriter {
  private bytes = spare ?? Buffer.allocUnsafe(1 << 20);
  private length = 0;
  private readonly ends: number[] = [];

  constructor() {
    // Taken: a second writer in this thread (none today) would get a buffer of its own.
    spare = null;
  }

  add(values: readonly IndexValue[]): void {
    let line = cell(values[0]);
    for (let i = 1; i < values.length; i++) line += ',' + cell(values[i]);
    line += '\n';
    // Room for the worst case (3 UTF-8 bytes per UTF-16 unit), so the write is never cut short.
    const most = line.length * 3;
    if (this.length + most > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + most));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(line, this.length);
    this.ends.push(this.length);
  }

  finish(): IndexBatch {
    spare = this.bytes;
    return { rows: this.ends.length, csv: new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.length).slice(), rowEnds: Uint32Array.from(this.ends) };
  }
}
