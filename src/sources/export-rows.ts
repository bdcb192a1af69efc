/**
 * The rows of an observability platform's export (Langfuse, LangSmith), whatever file it came
 * in: JSON Lines (one row per line), a JSON document (a list of rows, an API page
 * `{data: [rows], meta}`, or a list of such pages), CSV (a header, then one row per record), or
 * Parquet (read through the engine). Each row is handed out as a plain object with its place:
 * `line` is its line in a JSON Lines file, its 1-based ordinal among the rows otherwise, unique
 * and stable across reads either way. A line a strict parser rejects, a row that is no object,
 * a CSV row that does not parse and a Parquet file the engine cannot open are damaged, named
 * the same way whichever command reads them.
 */
import { parse as parseCsv } from 'csv-parse';
import { createReadStream } from 'node:fs';
import { parseJsonText } from '../canonical/json-value.js';
import type { DamagedLine, TraceRecord } from '../record.js';
import type { SourceBatch } from './source.js';
import type { TraceFile } from './trace-file.js';
import { JsonStreamError, JsonTooLongError, streamJson } from './json-stream.js';
import { isObject, type Json } from './json-values.js';
import { readLineBatches } from './lines.js';
import { parsedLine } from './damage.js';
import { headKeys, PARQUET_MAGIC } from './head.js';
import { readHead } from './head.js';

export interface ExportRow {
  value: Json;
  line: number;
  offset: number;
}

export interface RowBatch {
  rows: ExportRow[];
  damaged: DamagedLine[];
  bytes: number;
}

export type ExportFileKind = 'parquet' | 'csv' | 'jsonl' | 'json';

/** How a file is laid out, from its name and first bytes: a `.jsonl` file, or a JSON file whose first line is a whole object, is read by lines. */
export function exportFileKind(path: string, head: Buffer): ExportFileKind {
  if (head.subarray(0, 4).equals(PARQUET_MAGIC)) return 'parquet';
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  const newline = head.indexOf(0x0a);
  // An API page on one line (`{"data": [rows], "meta": …}`) is one document of many rows.
  if (headKeys(head)[0] === 'data') return 'json';
  if (newline > 0 && head[0] === 0x7b) {
    try {
      parseJsonText(head.subarray(0, newline));
      return 'jsonl';
    } catch {
      return 'json';
    }
  }
  return 'json';
}

const BATCH_ROWS = 512;

function objectRow(value: unknown, line: number, offset: number, file: TraceFile, where: string, batch: RowBatch): void {
  if (isObject(value)) batch.rows.push({ value, line, offset });
  else batch.damaged.push({ file: file.display, line, offset, reason: `${where}: not a JSON object, so no exported row` });
}

async function* jsonLines(file: TraceFile): AsyncGenerator<RowBatch> {
  for await (const lines of readLineBatches(file.path)) {
    const batch: RowBatch = { rows: [], damaged: [], bytes: 0 };
    for (const line of lines) {
      batch.bytes += line.length + 1;
      const parsed = parsedLine(line);
      if ('damage' in parsed) batch.damaged.push({ file: file.display, line: line.number, offset: line.offset, reason: parsed.damage });
      else objectRow(parsed.value, line.number, line.offset, file, `line ${line.number}`, batch);
    }
    yield batch;
  }
}

async function* jsonDocument(file: TraceFile): AsyncGenerator<RowBatch> {
  let ordinal = 0;
  let documents = 0;
  let batch: RowBatch = { rows: [], damaged: [], bytes: 0 };
  const take = (value: unknown, where: string): void => {
    ordinal++;
    objectRow(value, ordinal, 0, file, where, batch);
  };
  // A value that holds rows: a list of them, an API page's `data`, or a list of pages.
  const rowsOf = (value: unknown, where: string): void => {
    if (Array.isArray(value)) value.forEach((item, i) => (isObject(item) && Array.isArray(item.data) ? rowsOf(item.data, `${where}[${i}].data`) : take(item, `${where}[${i}]`)));
    else if (isObject(value) && Array.isArray(value.data)) rowsOf(value.data, `${where}.data`);
    else take(value, where);
  };
  let current: Json = {};
  let streamedData = false;
  try {
    for await (const events of streamJson(file.path, { multiple: true, streamed: new Set(['data']) })) {
      for (const event of events) {
        if (event.kind === 'element') {
          streamedData = true;
          const value = event.value;
          if (isObject(value) && Array.isArray(value.data)) rowsOf(value.data, `value ${documents + 1}.data[${event.index}].data`);
          else take(value, `value ${documents + 1}.data[${event.index}]`);
        } else if (event.kind === 'member') current[event.key] = event.value;
        else if (event.kind === 'document') rowsOf(event.value, `value ${++documents}`);
        else if (event.kind === 'end') {
          documents++;
          if (!streamedData && !('data' in current)) take(current, `value ${documents}`);
          current = {};
          streamedData = false;
        }
      }
      if (batch.rows.length >= BATCH_ROWS) {
        yield batch;
        batch = { rows: [], damaged: [], bytes: 0 };
      }
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    batch.damaged.push({ file: file.display, line: ordinal + 1, offset: 0, reason: `${error instanceof JsonTooLongError ? 'unreadable' : 'broken JSON'} after ${ordinal} row(s): ${error.message}` });
  }
  yield batch;
}

async function* csvRows(file: TraceFile): AsyncGenerator<RowBatch> {
  const parser = createReadStream(file.path).pipe(parseCsv({ columns: true, bom: true, relax_column_count: false, skip_empty_lines: true, info: true }));
  let ordinal = 0;
  let batch: RowBatch = { rows: [], damaged: [], bytes: 0 };
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      ordinal++;
      batch.rows.push({ value: record, line: ordinal, offset: info.lines });
      if (batch.rows.length >= BATCH_ROWS) {
        yield batch;
        batch = { rows: [], damaged: [], bytes: 0 };
      }
    }
  } catch (error) {
    // csv-parse stops at the first row it cannot read: the rows after it are not read.
    const line = (error as { lines?: number }).lines ?? 0;
    batch.damaged.push({ file: file.display, line: ordinal + 1, offset: 0, reason: `broken CSV after ${ordinal} row(s) (line ${line}): ${(error as Error).message.split('\n')[0]}` });
  }
  yield batch;
}

async function* parquetRows(file: TraceFile): AsyncGenerator<RowBatch> {
  const { readParquetRows } = await import('../engine/duckdb.js');
  let content;
  try {
    content = await readParquetRows(file.path);
  } catch (error) {
    yield { rows: [], damaged: [{ file: file.display, line: 0, offset: 0, reason: `unreadable Parquet: ${(error as Error).message.replace(`${file.path}: `, '')}` }], bytes: 0 };
    return;
  }
  const names = content.columns.map((column) => column.name);
  let ordinal = 0;
  try {
    for await (const rows of content.batches) {
      const batch: RowBatch = { rows: [], damaged: [], bytes: 0 };
      for (const row of rows) {
        ordinal++;
        const value: Json = {};
        names.forEach((name, i) => (value[name] = row[i]));
        batch.rows.push({ value, line: ordinal, offset: 0 });
      }
      yield batch;
    }
  } finally {
    content.close();
  }
}

/** The rows of an export file, in order, in batches. */
export async function* readExportRows(file: TraceFile, kind: ExportFileKind): AsyncGenerator<RowBatch> {
  if (kind === 'parquet') yield* parquetRows(file);
  else if (kind === 'csv') yield* csvRows(file);
  else if (kind === 'jsonl') yield* jsonLines(file);
  else yield* jsonDocument(file);
}

/**
 * A cell that may hold JSON as text (CSV holds every value so; the exports keep `input`,
 * `output` and maps as JSON strings): its value when it parses (numbers keep their text),
 * else the text itself. A value that is not text is returned as it is.
 */
export function jsonCell(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trim();
  if (t === '') return value;
  if (t[0] !== '{' && t[0] !== '[' && t[0] !== '"' && !/^-?\d/.test(t) && t !== 'true' && t !== 'false' && t !== 'null') return value;
  try {
    return parseJsonText(t);
  } catch {
    return value;
  }
}

/** A cell as a text, or null for an empty or missing one (CSV writes null as an empty cell). */
export function textCell(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (value instanceof String) return value.valueOf();
  return typeof value === 'number' ? String(value) : null;
}

/** The first of `names` the row holds a value for (an export names a field in snake_case, an API in camelCase). */
export function field(row: Json, ...names: string[]): unknown {
  for (const name of names) {
    const value = row[name];
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return undefined;
}

/**
 * An `input` or `output` cell: the platforms keep a structured value as its JSON text and a
 * plain text (a streamed answer, a prompt string) as it is, so only a text that starts as an
 * object, a list or a JSON string is parsed; one that does not parse stays text.
 */
export function ioCell(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trimStart();
  if (t[0] !== '{' && t[0] !== '[' && t[0] !== '"') return value;
  try {
    return parseJsonText(value);
  } catch {
    return value;
  }
}

/** The records of an export file: each row that `recordOf` reads as a model call (it returns null for any other). */
export async function* readExportRecords(
  file: TraceFile,
  recordOf: (file: TraceFile, row: Json, line: number, offset: number) => TraceRecord | null,
): AsyncGenerator<SourceBatch> {
  const kind = exportFileKind(file.path, readHead(file.path, 64 * 1024) ?? Buffer.alloc(0));
  for await (const batch of readExportRows(file, kind)) {
    const records: TraceRecord[] = [];
    for (const row of batch.rows) {
      const record = recordOf(file, row.value, row.line, row.offset);
      if (record !== null) records.push(record);
    }
    yield { records, damaged: batch.damaged };
  }
}

/** A map cell: a JSON object (text or value), or a Parquet MAP as the engine hands it out (`[{key, value}]`); null for anything else. */
export function mapCell(value: unknown): Json | null {
  const parsed = jsonCell(value);
  if (isObject(parsed)) return parsed;
  if (!Array.isArray(parsed) || !parsed.every((entry) => isObject(entry) && typeof entry.key === 'string' && 'value' in entry)) return null;
  return Object.fromEntries((parsed as Json[]).map((entry) => [entry.key as string, entry.value]));
}
