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

/** Rows of one share, column by column: plain arrays that cross threads as they are. */
export interface IndexBatch {
  rows: number;
  /** In INDEX_COLUMNS order. */
  columns: IndexValue[][];
}

export function emptyBatch(): IndexBatch {
  return { rows: 0, columns: INDEX_COLUMNS.map(() => []) };
}
