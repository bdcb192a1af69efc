/**
 * The record index: one row per record, its columns and their types. Written by `traces
 * index`, queried by `traces sql`, and read by any engine that reads Parquet. docs/engine.md
 * documents the same columns; a test reads them back with DuckDB.
 */
import { closeSync, openSync } from 'node:fs';
import { writeAll } from '../output/write-all.js';

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
  /*
   * What the global decisions compare (docs/engine.md, "The keep-list"): null unless the record is ok.
   * The trajectory collapse's digest of the whole conversation (its program's chain, 32 hex digits).
   */
  column('trajectory', 'VARCHAR', false),
  /** Input messages (all but the completion), for the collapse's holder: the most inputs. */
  column('trajectory_inputs', 'INTEGER', false),
  /** The chain digests of the input prefixes that end at an assistant turn, space-separated ('' for none). */
  column('trajectory_prefixes', 'VARCHAR', false),
  /** The near-duplicate signature as hex words: 4 MinHash band hashes (8 digits each), then the b-bit sketch. */
  column('minhash', 'VARCHAR', false),
  /** The tool calls the tool inference reads: a JSON array of "name\nargument types\ncall key digest". */
  column('tool_calls', 'VARCHAR', false),
  /** With `traces index --format`: the quality stage that drops the record (truncated, empty, broken, …, as export's options say), or null. */
  column('quality', 'VARCHAR', false),
  /** With `traces index --format`: the flagging quality stages that named a record they keep (refusal, …, comma-separated), or null; dedupe prefers a record none named. */
  column('flagged', 'VARCHAR', false),
  /** With `traces index --format`: the target's drop reason for the record (not_representable, …), null when it takes it. */
  column('refused', 'VARCHAR', false),
  /** With `traces index --format`: the digest of the record's example line, which duplicate_example compares (32 hex digits). */
  column('example', 'VARCHAR', false),
  /** With `traces index --format`: the example's first-user-message group as a fraction in [0, 1) for --seed, which sides it (split.ts). */
  column('fraction', 'DOUBLE', false),
];

/**
 * A share's rows on disk: CSV text (UTF-8, every string quoted, null an empty unquoted
 * field), which the engine reads in its own threads. The thread that reads the share writes
 * them, so no rows cross threads and none wait in memory: a share holds at most one buffer.
 */
export interface IndexRowFile {
  /** Null when the share has no rows (no file is written). */
  file: string | null;
  rows: number;
}

/** Bytes a writer gathers before writing them out. */
const FLUSH_BYTES = 1 << 20;

/** The buffer of the last writer in this thread, for the next one: fresh pages cost more in page faults than the rows cost to copy. */
let spare: Buffer | null = null;

/** Writes a share's rows, one CSV line each, to its own file. */
export class IndexRowWriter {
  private bytes = spare ?? Buffer.allocUnsafe(FLUSH_BYTES);
  private length = 0;
  private fd = -1;
  private rows = 0;

  constructor(private readonly file: string) {
    // Taken: a second writer in this thread at the same time would get a buffer of its own.
    spare = null;
  }

  /** A row as one line of CSV text, its newline included (see index/row.ts). */
  addLine(line: string): void {
    // Room for the worst case (3 UTF-8 bytes per UTF-16 unit), so the write is never cut short.
    const most = line.length * 3;
    if (this.length + most > this.bytes.length) {
      this.flush();
      if (most > this.bytes.length) this.bytes = Buffer.allocUnsafe(most);
    }
    this.length += this.bytes.write(line, this.length);
    this.rows++;
  }

  private flush(): void {
    if (this.length === 0) return;
    if (this.fd === -1) this.fd = openSync(this.file, 'wx');
    writeAll(this.fd, this.bytes, this.file, this.length);
    this.length = 0;
  }

  /** Writes what is left and closes the file. */
  finish(): IndexRowFile {
    try {
      this.flush();
    } finally {
      this.close();
    }
    return { file: this.rows > 0 ? this.file : null, rows: this.rows };
  }

  /** Closes the file without writing what is left (after an error); the scratch folder goes with the run. */
  close(): void {
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
    if (this.bytes.length === FLUSH_BYTES) spare = this.bytes;
  }
}
