/**
 * `--keep-list FILE`: the call_ids to keep, computed elsewhere (an engine over `traces index`).
 * A text list reads like every other id list (id-list.ts); a Parquet file (told by its
 * first bytes) gives its `call_id` column. Either way the result is an `IdList`, checked off as
 * records are read, so ids that matched no record are counted and reported, never ignored.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { UserError } from '../errors.js';
import { IdList, readIdListFiles } from '../id-list.js';

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

export async function readKeepList(file: string, flag = '--keep-list'): Promise<IdList> {
  if (!existsSync(file)) throw new UserError(`${flag} ${file}: no such file`);
  if (!startsWithParquetMagic(file)) return readIdListFiles(flag, [file]);
  // The engine loads only for Parquet lists: text lists cost nothing at start-up.
  const { readCallIds } = await import('../engine/duckdb.js');
  const list = new IdList();
  // A null call_id keeps no record: it is reported with the lines that cannot be a call_id, by its row.
  (await readCallIds(file)).forEach((id, row) => list.add({ id: id ?? 'NULL', file, line: row + 1 }, id === null));
  return list;
}
