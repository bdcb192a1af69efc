/**
 * The embedded SQL engine (DuckDB), and the only module that imports it. It is loaded on
 * first use, by `index`, `sql`, Parquet keep-lists and the `hf` target's Parquet files only:
 * every other command starts without its native library.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UserError } from '../errors.js';
import { INDEX_COLUMNS } from './index-columns.js';
import { ROW_GROUP_ROWS, type IndexParts } from './index-parts.js';
import { holdsNoStatement, INDEX_TABLE, NO_STATEMENT } from './statements.js';

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

/** An engine error in a query as one line for the user (our own UserErrors pass as they are). */
function queryError(error: unknown, keyword = ''): Error {
  if (error instanceof UserError) return error;
  const line = firstLine(error).replace(/^Failed to extract statements: /, '');
  const hint = /file system operations are disabled/.test(line) ? ' (traces sql reads the index only: no other file, and writes none)' : keyword;
  return new UserError(`query failed: ${line}${hint}`);
}

/** A string as an SQL literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const PARQUET_OPTIONS = `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}`;
/** The index's columns and types, as `read_csv` takes them. */
const CSV_COLUMNS = `{${INDEX_COLUMNS.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ')}}`;

/** The index's rows from CSV files as IndexRowWriter writes them: strings quoted ("" is empty), null an empty unquoted field. */
function readCsv(files: readonly string[]): string {
  return (
    `read_csv([${files.map(sqlString).join(', ')}], header = false, delim = ',', quote = '"', escape = '"', new_line = '\\n', ` +
    `columns = ${CSV_COLUMNS}, auto_detect = false, allow_quoted_nulls = false)`
  );
}

/** A query's answer: column names, type names, and rows of plain JSON-ready values. */
export interface QueryResult {
  columns: string[];
  types: string[];
  rows: JsonValue[][];
}

/** A query's answer as it comes: column names, type names, and the rows in batches. */
export interface QueryStream {
  columns: string[];
  types: string[];
  rows: AsyncGenerator<JsonValue[][]>;
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
  static async open(spill: string | null, options: { memoryLimit?: string; threads?: number } = {}): Promise<Engine> {
    const { DuckDBInstance } = await duckdb();
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: options.memoryLimit ?? '512MB',
      ...(options.threads !== undefined ? { threads: String(options.threads) } : {}),
      ...(spill !== null ? { temp_directory: spill } : {}),
      // Extensions are never fetched: queries see the index and local files only.
      autoinstall_known_extensions: 'false',
      allow_community_extensions: 'false',
      // A secret made persistent would be written to ~/.duckdb.
      allow_persistent_secrets: 'false',
    });
    const connection = await instance.connect();
    // Times in UTC, as every output of traces: date_trunc('day', to_timestamp(timestamp)) groups the same calls on every machine.
    await connection.run("SET TimeZone = 'UTC'");
    return new Engine(connection, () => {
      connection.closeSync();
      instance.closeSync();
    });
  }

  /** The index's rows on disk (IndexParts), in row order. */
  private parts: IndexParts | null = null;

  /** `records` becomes a view over the index's CSV files, read in the engine's threads as they are queried or copied. */
  async attachCsvIndex(parts: IndexParts): Promise<void> {
    this.parts = parts;
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM ${readCsv(parts.files())}`);
  }

  /** The index as one Parquet file at `target`, or as one Parquet file per part in the folder `target`. */
  async writeParquet(target: string, folder: boolean): Promise<void> {
    try {
      if (!folder) {
        await this.connection.run(`COPY (SELECT * FROM ${INDEX_TABLE}) TO ${sqlString(target)} (${PARQUET_OPTIONS})`);
        return;
      }
      mkdirSync(target);
      for (const [i, part] of (this.parts?.parts() ?? []).entries()) {
        // The engine keeps rows in the order it reads them, through LIMIT and OFFSET too.
        const rows = `SELECT * FROM ${readCsv(part.files)} LIMIT ${part.limit} OFFSET ${part.offset}`;
        await this.connection.run(`COPY (${rows}) TO ${sqlString(path.join(target, `part-${i}.parquet`))} (${PARQUET_OPTIONS})`);
      }
    } catch (error) {
      // The disk or the memory, not our own SQL: one line the user can act on.
      if (/^(IO|Out of Memory) Error/.test(firstLine(error))) {
        throw new UserError(`writing the index: ${firstLine(error)}: free some space or memory, raise the file-size limit (ulimit -f) or write elsewhere`);
      }
      throw error;
    }
  }

  /** Makes `records` a view over Parquet files (one file, or every .parquet file of a folder). */
  async attachIndex(parquet: string, folder: boolean): Promise<void> {
    const source = folder ? `${parquet.replace(/\/+$/, '')}/*.parquet` : parquet;
    await this.connection.run(`CREATE VIEW ${INDEX_TABLE} AS SELECT * FROM read_parquet(${sqlString(source)})`);
  }

  /**
   * Confines every query from here on to `folder`, the run's own scratch folder, which must
   * hold the engine's spill files (its temp_directory, which the engine always allows) and
   * the index: no other file is read or written, so a query cannot write over a trace or the
   * user's index, nor read another file (`.tmp` in the working folder, the engine's default
   * temp_directory, included). The configuration is then locked, so no query can lift this:
   * a file allowed is allowed for writing too, so nothing of the user's may be allowed.
   */
  async confine(folder: string): Promise<void> {
    await this.connection.run(`SET allowed_directories = [${sqlString(folder.endsWith(path.sep) ? folder : folder + path.sep)}]`);
    await this.connection.run("SET allowed_paths = []");
    await this.connection.run('SET enable_external_access = false');
    await this.connection.run('SET lock_configuration = true');
  }

  /**
   * Runs a query; an error in it is a UserError of one line. With `readOnly` (a user's query),
   * a statement that writes files (COPY, EXPORT), attaches a database, loads an extension or
   * prepares one of those is refused before it runs, with a line that says why: `confine`
   * already keeps them from any file of the user's, and this only says so more clearly. The rows of the last statement come in batches
   * as the engine makes them, so an answer of millions of rows never waits whole in memory.
   */
  /**
   * A syntax error at a keyword of DuckDB's SQL, as `sum(cost_usd) cost` is (a bare alias may not
   * be a keyword): the fix, `AS cost` or quotes. Empty for any other error, or another word.
   */
  private async keywordHint(error: unknown): Promise<string> {
    const near = /Parser Error: syntax error at or near "([^"]+)"/.exec(firstLine(error));
    if (near === null) return '';
    const word = near[1];
    try {
      const found = await this.connection.runAndReadAll(`SELECT 1 FROM duckdb_keywords() WHERE keyword_name = ${sqlString(word.toLowerCase())}`);
      if (found.getRows().length === 0) return '';
    } catch {
      return '';
    }
    return ` (${word} is a keyword of DuckDB's SQL: to name a column ${word}, write AS ${word} after its expression, or quote it: "${word}")`;
  }

  async stream(sql: string, options: { readOnly?: boolean } = {}): Promise<QueryStream> {
    const { StatementType } = await duckdb();
    const refused = new Map<number, string>([
      [StatementType.COPY, 'COPY'],
      [StatementType.COPY_DATABASE, 'COPY FROM DATABASE'],
      [StatementType.EXPORT, 'EXPORT DATABASE'],
      [StatementType.ATTACH, 'ATTACH'],
      [StatementType.DETACH, 'DETACH'],
      [StatementType.LOAD, 'LOAD or INSTALL'],
      [StatementType.EXTENSION, 'an extension statement'],
      [StatementType.UPDATE_EXTENSIONS, 'UPDATE EXTENSIONS'],
      // What a prepared statement does is not known at EXECUTE: a one-shot query has no need of them.
      [StatementType.PREPARE, 'PREPARE'],
      [StatementType.EXECUTE, 'EXECUTE'],
    ]);
    // The engine answers a text of no statement (blank, comments, semicolons) with "Error in native callback".
    if (holdsNoStatement(sql)) throw new UserError(NO_STATEMENT);
    let result;
    try {
      const statements = await this.connection.extractStatements(sql);
      // One after another, as a script runs: a statement may use what an earlier one made (a temporary table).
      for (let i = 0; i < statements.count; i++) {
        const statement = await statements.prepare(i);
        const what = options.readOnly === true ? refused.get(statement.statementType) : undefined;
        if (what !== undefined) {
          throw new UserError(`${what} is not allowed: traces sql reads the records and writes nothing; print the rows with --csv or --json and redirect them to a file`);
        }
        if (i + 1 < statements.count) await statement.run();
        else result = await statement.stream();
      }
    } catch (error) {
      throw queryError(error, await this.keywordHint(error));
    }
    if (result === undefined) throw new UserError(NO_STATEMENT);
    const answer = result;
    async function* rows(): AsyncGenerator<JsonValue[][]> {
      try {
        for await (const batch of answer.yieldRowsJs()) yield batch.map((row) => row.map(toJson));
      } catch (error) {
        // A query can fail while its rows come (a cast of a value met late): the same one line.
        throw queryError(error);
      }
    }
    return { columns: answer.columnNames(), types: answer.columnTypes().map(String), rows: rows() };
  }

  /** A query's whole answer, for answers known to be small (a keep-list's ids are the keys anyway). */
  async query(sql: string, options: { readOnly?: boolean } = {}): Promise<QueryResult> {
    const { columns, types, rows } = await this.stream(sql, options);
    const all: JsonValue[][] = [];
    for await (const batch of rows) for (const row of batch) all.push(row);
    return { columns, types, rows: all };
  }

  close(): void {
    this.close_();
  }

  /** For this module's functions: statements the engine runs for traces itself (COPY included). */
  connection_(): Connection {
    return this.connection;
  }
}

/** The `call_id` column of a Parquet file (a keep-list computed by an engine), row by row: null where a row holds none. */
export async function readCallIds(file: string): Promise<(string | null)[]> {
  const engine = await Engine.open(null);
  try {
    let result: QueryResult;
    try {
      result = await engine.query(`SELECT CAST(call_id AS VARCHAR) FROM read_parquet(${sqlString(file)})`);
    } catch (error) {
      throw new UserError(`${file}: not a Parquet file with a call_id column (${(error as Error).message.replace(/^query failed: /, '')})`);
    }
    return result.rows.map((row) => (row[0] === null ? null : String(row[0])));
  } finally {
    engine.close();
  }
}

/**
 * What the engine may hold while it writes a dataset's file. A 216 MB JSONL file (a shard is at
 * most 256 MB) peaked at 257 MB of RSS in all with this, and failed at 128 MB (the JSON reader's
 * buffers): it streams, a row group at a time.
 */
const DATASET_WRITE_MEMORY = '256MB';

/** Rows of a dataset's Parquet row group: DuckDB's smallest (a vector), so a reader streams a few MB at a time. */
export const DATASET_ROW_GROUP_ROWS = 2048;

/**
 * JSONL lines (one object each) as a Parquet file, rows in line order, with the column types
 * given (`columns`: name → DuckDB type), never inferred: a key no type names is left out, which
 * the caller checks by reading the rows back (`readParquetRows`).
 */
export async function jsonlToParquet(jsonl: string, parquet: string, columns: Record<string, string>, longestLine: number): Promise<void> {
  const engine = await Engine.open(null, { threads: 1, memoryLimit: DATASET_WRITE_MEMORY });
  try {
    const types = `{${Object.entries(columns).map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`).join(', ')}}`;
    // The reader's buffer holds the longest line: sized to the file's, not to the reader's 1 GB ceiling (it allocates twice that).
    const objectSize = Math.max(1 << 20, longestLine + 1);
    const rows = `SELECT * FROM read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = ${types}, auto_detect = false, maximum_object_size = ${objectSize})`;
    try {
      await engine.connection_().run(`COPY (${rows}) TO ${sqlString(parquet)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${DATASET_ROW_GROUP_ROWS})`);
    } catch (error) {
      // Out of memory is said by the task's parent (engine/child.ts), which knows what the engine was given.
      if (/^IO Error/.test(firstLine(error))) throw new UserError(`writing ${parquet}: ${firstLine(error)}: free some space, or write elsewhere`);
      throw error;
    }
  } finally {
    engine.close();
  }
}

/** The forced sides of a keep-list (`split`, where not null) by call_id; null when it has no `split` column. */
export async function readForcedSplits(file: string): Promise<[string, string][] | null> {
  const engine = await Engine.open(null);
  try {
    const columns = await engine.query(`SELECT name FROM parquet_schema(${sqlString(file)})`);
    if (!columns.rows.some((row) => row[0] === 'split')) return null;
    const result = await engine.query(`SELECT CAST(call_id AS VARCHAR), CAST(split AS VARCHAR) FROM read_parquet(${sqlString(file)}) WHERE split IS NOT NULL AND call_id IS NOT NULL`);
    return result.rows.map((row) => [String(row[0]), String(row[1])]);
  } finally {
    engine.close();
  }
}

/** The rows a Parquet file holds, from its metadata. */
export async function parquetRowCount(file: string): Promise<number> {
  const engine = await Engine.open(null, { threads: 1 });
  try {
    const count = await engine.query(`SELECT num_rows FROM parquet_file_metadata(${sqlString(file)})`);
    return Number(count.rows[0]![0]);
  } finally {
    engine.close();
  }
}

/** A Parquet file's key-value metadata, as text. */
export async function readParquetMetadata(file: string): Promise<Map<string, string>> {
  const engine = await Engine.open(null);
  try {
    const result = await engine.query(`SELECT decode(key), decode(value) FROM parquet_kv_metadata(${sqlString(file)})`);
    return new Map(result.rows.map((row) => [String(row[0]), String(row[1])]));
  } finally {
    engine.close();
  }
}

/** The top-level column names of a Parquet file, from its schema alone. */
export async function parquetColumnNames(file: string): Promise<string[]> {
  const engine = await Engine.open(null, { threads: 1 });
  try {
    const described = await engine.query(`DESCRIBE SELECT * FROM read_parquet(${sqlString(file)})`);
    return described.rows.map((row) => String(row[0]));
  } finally {
    engine.close();
  }
}

/** A Parquet file as a reader finds it: its top-level columns and types, row groups, and rows (plain JSON values, in batches). */
export interface ParquetContent {
  columns: { name: string; type: string }[];
  rowGroups: number;
  rows: number;
  batches: AsyncGenerator<JsonValue[][]>;
  close(): void;
}

/** Opens a Parquet file for reading; a file that is no Parquet is a UserError naming it. */
export async function readParquetRows(file: string): Promise<ParquetContent> {
  const engine = await Engine.open(null, { threads: 1 });
  try {
    const source = `read_parquet(${sqlString(file)})`;
    const described = await engine.query(`DESCRIBE SELECT * FROM ${source}`);
    const groups = await engine.query(`SELECT count(DISTINCT row_group_id) FROM parquet_metadata(${sqlString(file)})`);
    const count = await engine.query(`SELECT num_rows FROM parquet_file_metadata(${sqlString(file)})`);
    const { rows } = await engine.stream(`SELECT * FROM ${source}`);
    return {
      columns: described.rows.map((row) => ({ name: String(row[0]), type: String(row[1]) })),
      rowGroups: Number(groups.rows[0]![0]),
      rows: Number(count.rows[0]![0]),
      batches: rows,
      close: () => engine.close(),
    };
  } catch (error) {
    engine.close();
    throw new UserError(`${file}: not a Parquet file a reader can open (${firstLine(error).replace(/^query failed: /, '')})`);
  }
}
