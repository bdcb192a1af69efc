/**
 * Which recorder wrote a file, from the shape of its content: the keys of its top-level
 * object (or of the first element of a top-level array, or of its first line), read from
 * the first bytes only. File names do not count: Ask writes JSON into `recording.yml`.
 */
import type { SourceKind } from '../record.js';
import { SOURCES } from './registry.js';
import { csvHeader, headKeys, PARQUET_MAGIC, readHead } from './head.js';

export { SOURCE_KINDS } from './registry.js';
export { csvHeader, headKeys, headText, PARQUET_MAGIC, startsAsJson } from './head.js';

/** The recorder whose shape these top-level keys (of `head`, when known) have, or null. */
export function kindOfKeys(keys: readonly string[], head: Buffer = Buffer.alloc(0)): SourceKind | null {
  if (keys.includes('synalinks_version')) return 'synalinks';
  return SOURCES.find((source) => source.detect(keys, head))?.kind ?? null;
}

/** The column names of a Parquet file, or none when the engine cannot read its schema. */
async function parquetColumns(path: string): Promise<string[]> {
  try {
    return await (await import('../engine/duckdb.js')).parquetColumnNames(path);
  } catch {
    return [];
  }
}

/**
 * The recorder that wrote the file at `path`, from its first bytes (a table's column names:
 * a CSV file's header, a Parquet file's schema); null when none matches.
 */
export async function detectSource(path: string): Promise<SourceKind | null> {
  const head = readHead(path);
  if (head === null) return null;
  if (head.subarray(0, 4).equals(PARQUET_MAGIC)) return kindOfKeys(await parquetColumns(path), head);
  if (path.toLowerCase().endsWith('.csv')) return kindOfKeys(csvHeader(head), head);
  return kindOfKeys(headKeys(head), head);
}
