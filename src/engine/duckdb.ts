/**
 * The embedded SQL engine (DuckDB), and the only module that imports it. It is loaded on
 * first use, by `index`, `sql` and Parquet keep-lists only: every other command starts
 * without its native library.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UserError } from '../errors.js';
import { INDEX_COLUMNS, type IndexBatch } from '../index/columns.js';

type DuckDB = typeof import('@duckdb/node-api');
type Connection = import('@duckdb/node-api').DuckDBConnection;
type Appender = import('@duckdb/node-api').DuckDBAppender;

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
/** Rows per part file: what the engine holds in memory at most while indexing (TRACES_INDEX_PART_ROWS: tests). */
const PART_ROWS = Number(process.env.TRACES_INDEX_PART_ROWS) > 0 ? Number(process.env.TRACES_INDEX_PART_ROWS) : 4 * ROW_GROUP_ROWS;
const PARQUET_OPTIONS = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}`;
const INDEX_DDL = INDEX_COLUMNS.map((c) => `"${c.name}" ${c.type}${c.notNull ? ' NOT NULL' : ''}`).join(', ');
const KINDS = INDEX_COLUMNS.map((c) => c.type);

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
  private appender: Appender | null = null;

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
   * Starts an index whose rows go, a part at a time, into Parquet part files in `partsDir`:
   * the engine never holds more than one part, however big the tree.
   */
  async createIndexTable(partsDir: string): Promise<void> {
    this.partsDir = partsDir;
    await this.connection.run(`CREATE TABLE ${INDEX_TABLE} (${INDEX_DDL})`);
    this.appender = await this.connection.createAppender(INDEX_TABLE);
  }

  private partsDir = '';
  private rowsInPart = 0;
  /** Part files written so far, in row order. */
  readonly parts: string[] = [];

  /** Appends a share's rows, in order. */
  async appendBatch(batch: IndexBatch): Promise<void> {
    let appender = this.appender!;
    const { columns } = batch;
    for (let row = 0; row < batch.rows; row++) {
      for (let c = 0; c < KINDS.length; c++) {
        const value = columns[c][row];
        if (value === null) appender.appendNull();
        else if (KINDS[c] === 'VARCHAR') appender.appendVarchar(value as string);
        else if (KINDS[c] === 'BOOLEAN') appender.appendBoolean(value as boolean);
        // Whole numbers go in as doubles (exact below 2^53; rows hold only safe integers): no BigInt per value.
        else appender.appendDouble(value as number);
      }
      appender.endRow();
      if (++this.rowsInPart >= PART_ROWS) {
        await this.writePart(true);
        appender = this.appender!;
      }
    }
  }

  /** Writes the rows appended since the last part as the next part file, and empties the table. */
  private async writePart(more: boolean): Promise<void> {
    this.appender?.closeSync();
    this.appender = null;
    const part = path.join(this.partsDir, `part-${this.parts.length}.parquet`);
    await this.connection.run(`COPY ${INDEX_TABLE} TO ${sqlString(part)} (${PARQUET_OPTIONS})`);
    this.parts.push(part);
    this.rowsInPart = 0;
    if (!more) return;
    // Dropped, not deleted from: the memory goes back to the engine at once.
    await this.connection.run(`DROP TABLE ${INDEX_TABLE}`);
    await this.connection.run(`CREATE TABLE ${INDEX_TABLE} (${INDEX_DDL})`);
    this.appender = await this.connection.createAppender(INDEX_TABLE);
  }

  /** Writes the last part (an index of no rows is one part with the columns only); `records` becomes a view over the parts. */
  async finishIndex(): Promise<void> {
    if (this.rowsInPart > 0 || this.parts.length === 0) await this.writePart(false);
    else {
      this.appender?.closeSync();
      this.appender = null;
    }
    await this.connection.run(`DROP TABLE ${INDEX_TABLE}`);
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM read_parquet([${this.parts.map(sqlString).join(', ')}])`);
  }

  /** The index as one Parquet file at `target`, or as the part files in the folder `target`. */
  async writeParquet(target: string, folder: boolean): Promise<void> {
    if (folder) {
      mkdirSync(target);
      this.parts.forEach((part, i) => renameSync(part, path.join(target, `part-${i}.parquet`)));
    } else if (this.parts.length === 1) renameSync(this.parts[0], target);
    else await this.connection.run(`COPY (SELECT * FROM ${INDEX_TABLE}) TO ${sqlString(target)} (${PARQUET_OPTIONS})`);
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
    try {
      this.appender?.closeSync();
    } catch {
      // Closing after a failed append: the database is dropped anyway.
    }
    this.close_();
  }
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
