/**
 * The embedded SQL engine (DuckDB), and the only module that imports it. It is loaded on
 * first use, by `index`, `sql` and Parquet keep-lists only: every other command starts
 * without its native library.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UserError } from '../errors.js';
import { INDEX_COLUMNS, type IndexBatch } from '../index/columns.js';

type DuckDB = typeof import('@duckdb/node-api');
type Connection = import('@duckdb/node-api').DuckDBConnection;

let loaded: Promise<DuckDB> | null = null;

async function duckdb(): Promise<DuckDB> {
  loaded ??= (async () => {
    try {
      // Required, not imported: the package is CommonJS, and importing it makes Node scan each of its files for exports.
      return createRequire(import.meta.url)('@duckdb/node-api') as DuckDB;
    } catch (error) {
      loaded = null;
      throw new UserError(
        `the embedded SQL engine (@duckdb/node-api) could not be loaded: ${firstLine(error)}; reinstall traces with its dependencies (npm install)`,
      );
    }
  })();
  return loaded;
}

/** The first line of an engine error: DuckDB adds the query text and a caret below it. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}

/** A string as an SQL literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Rows per Parquet row group: large enough for engines to scan well, small enough to read in parallel. */
export const ROW_GROUP_ROWS = 131_072;
/** Rows per part file, in a folder index (TRACES_INDEX_PART_ROWS: tests). */
const PART_ROWS = Number(process.env.TRACES_INDEX_PART_ROWS) > 0 ? Number(process.env.TRACES_INDEX_PART_ROWS) : 4 * ROW_GROUP_ROWS;
const PARQUET_OPTIONS = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}`;
/** The index's columns and types, as `read_csv` takes them. */
const CSV_COLUMNS = `{${INDEX_COLUMNS.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ')}}`;

/** The index's rows from CSV parts as IndexBatch writes them: strings quoted ("" is empty), null an empty unquoted field. */
function readCsv(files: readonly string[]): string {
  return (
    `read_csv([${files.map(sqlString).join(', ')}], header = false, delim = ',', quote = '"', escape = '"', new_line = '\\n', ` +
    `columns = ${CSV_COLUMNS}, auto_detect = false, allow_quoted_nulls = false)`
  );
}

export const INDEX_TABLE = 'records';

/** A query's answer: column names, type names, and rows of plain JSON-ready values. */
export interface QueryResult {
  columns: string[];
  types: string[];
  rows: JsonValue[][];
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Numbers stay numbers while they are exact; bigger integers, dates and decimals become text. */
function toJson(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toJson(v)]));
  }
  return String(value);
}

export class Engine {
  private constructor(
    private readonly connection: Connection,
    private readonly close_: () => void,
  ) {}

  /**
   * An in-memory engine. With `spill`, a scratch folder: past the memory limit DuckDB moves
   * blocks there, so the index of a big tree needs no more memory than a small one's.
   */
  static async open(spill: string | null, options: { memoryLimit?: string } = {}): Promise<Engine> {
    const { DuckDBInstance } = await duckdb();
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: options.memoryLimit ?? '512MB',
      ...(spill !== null ? { temp_directory: spill } : {}),
      // Extensions are never fetched: queries see the index and local files only.
      autoinstall_known_extensions: 'false',
    });
    const connection = await instance.connect();
    return new Engine(connection, () => {
      connection.closeSync();
      instance.closeSync();
    });
  }

  /**
   * Starts an index whose rows go, a part at a time, into CSV part files in `partsDir`: the
   * engine reads them in its own threads when the index is queried or written, streaming, so
   * memory does not grow with the tree.
   */
  async createIndexTable(partsDir: string): Promise<void> {
    this.partsDir = partsDir;
    this.startPart();
  }

  private partsDir = '';
  private part = -1;
  private rowsInPart = 0;
  /** Part files written so far, in row order. */
  readonly parts: string[] = [];

  private startPart(): void {
    const part = path.join(this.partsDir, `part-${this.parts.length}.csv`);
    this.part = openSync(part, 'wx');
    this.parts.push(part);
    this.rowsInPart = 0;
  }

  /** Appends a share's rows, in order, starting a new part every PART_ROWS rows. */
  async appendBatch(batch: IndexBatch): Promise<void> {
    let row = 0;
    let start = 0;
    while (row < batch.rows) {
      if (this.rowsInPart >= PART_ROWS) {
        closeSync(this.part);
        this.startPart();
      }
      const last = Math.min(batch.rows, row + PART_ROWS - this.rowsInPart) - 1;
      const end = batch.rowEnds[last];
      writeAll(this.part, batch.csv, start, end);
      this.rowsInPart += last + 1 - row;
      row = last + 1;
      start = end;
    }
  }

  /** Closes the last part; `records` becomes a view over the parts (an index of no rows is one empty part). */
  async finishIndex(): Promise<void> {
    closeSync(this.part);
    this.part = -1;
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM ${readCsv(this.parts)}`);
  }

  /** The index as one Parquet file at `target`, or as one Parquet file per part in the folder `target`. */
  async writeParquet(target: string, folder: boolean): Promise<void> {
    if (!folder) {
      await this.connection.run(`COPY (SELECT * FROM ${INDEX_TABLE}) TO ${sqlString(target)} (${PARQUET_OPTIONS})`);
      return;
    }
    mkdirSync(target);
    for (const [i, part] of this.parts.entries()) {
      await this.connection.run(`COPY (SELECT * FROM ${readCsv([part])}) TO ${sqlString(path.join(target, `part-${i}.parquet`))} (${PARQUET_OPTIONS})`);
    }
  }

  /** Makes `records` a view over Parquet files (one file, or every .parquet file of a folder). */
  async attachIndex(parquet: string, folder: boolean): Promise<void> {
    const source = folder ? `${parquet.replace(/\/+$/, '')}/*.parquet` : parquet;
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM read_parquet(${sqlString(source)})`);
  }

  /** Runs a user's query; an error in it is a UserError of one line. */
  async query(sql: string): Promise<QueryResult> {
    let reader;
    try {
      reader = await this.connection.runAndReadAll(sql);
    } catch (error) {
      throw new UserError(`query failed: ${firstLine(error)}`);
    }
    return {
      columns: reader.columnNames(),
      types: reader.columnTypes().map(String),
      rows: reader.getRowsJS().map((row) => row.map(toJson)),
    };
  }

  close(): void {
    if (this.part !== -1) closeSync(this.part);
    this.part = -1;
    this.close_();
  }
}

function writeAll(fd: number, bytes: Uint8Array, start: number, end: number): void {
  while (start < end) start += writeSync(fd, bytes, start, end - start);
}

/** The `call_id` column of a Parquet file (a keep-list computed by an engine). */
export async function readCallIds(file: string): Promise<string[]> {
  const engine = await Engine.open(null);
  try {
    let result: QueryResult;
    try {
      result = await engine.query(`SELECT CAST(call_id AS VARCHAR) FROM read_parquet(${sqlString(file)}) WHERE call_id IS NOT NULL`);
    } catch (error) {
      throw new UserError(`${file}: not a Parquet file with a call_id column (${(error as Error).message.replace(/^query failed: /, '')})`);
    }
    return result.rows.map((row) => String(row[0]));
  } finally {
    engine.close();
  }
}
