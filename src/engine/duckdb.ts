/**
 * The embedded SQL engine (DuckDB), and the only module that imports it. It is loaded on
 * first use, by `index`, `sql` and Parquet keep-lists only: every other command starts
 * without its native library.
 */
import { createRequire } from 'node:module';
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
/** Past this, a folder output starts a new part file. */
const PART_FILE_BYTES = '256MB';

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

  async createIndexTable(): Promise<void> {
    const columns = INDEX_COLUMNS.map((c) => `"${c.name}" ${c.type}${c.notNull ? ' NOT NULL' : ''}`);
    await this.connection.run(`CREATE TABLE ${INDEX_TABLE} (${columns.join(', ')})`);
    this.appender = await this.connection.createAppender(INDEX_TABLE);
  }

  /** Appends a share's rows, in order. */
  appendBatch(batch: IndexBatch): void {
    const appender = this.appender!;
    const { columns } = batch;
    const kinds = INDEX_COLUMNS.map((c) => c.type);
    for (let row = 0; row < batch.rows; row++) {
      for (let c = 0; c < kinds.length; c++) {
        const value = columns[c][row];
        if (value === null) appender.appendNull();
        else if (kinds[c] === 'VARCHAR') appender.appendVarchar(value as string);
        else if (kinds[c] === 'BOOLEAN') appender.appendBoolean(value as boolean);
        // Whole numbers go in as doubles (exact below 2^53; rows hold only safe integers): no BigInt per value.
        else appender.appendDouble(value as number);
      }
      appender.endRow();
    }
  }

  /** Writes the index table as one Parquet file, or as part files in `target` when `folder`. */
  async writeParquet(target: string, folder: boolean): Promise<void> {
    this.appender?.closeSync();
    this.appender = null;
    const options = [`FORMAT parquet`, `COMPRESSION zstd`, `ROW_GROUP_SIZE ${ROW_GROUP_ROWS}`];
    if (folder) options.push(`FILE_SIZE_BYTES '${PART_FILE_BYTES}'`, `FILENAME_PATTERN 'part-{i}'`);
    await this.connection.run(`COPY ${INDEX_TABLE} TO ${sqlString(target)} (${options.join(', ')})`);
  }

  /** Makes `records` a view over Parquet files (one file, or every .parquet file of a folder). */
  async attachIndex(parquet: string, folder: boolean): Promise<void> {
    const source = folder ? `${parquet.replace(/\/+$/, '')}/*.parquet` : parquet;
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM read_parquet(${sqlString(source)})`);
  }

  /** Closes the appender so the rows appended are visible to queries. */
  finishAppending(): void {
    this.appender?.closeSync();
    this.appender = null;
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
