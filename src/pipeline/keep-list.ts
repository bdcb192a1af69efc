/**
 * `--keep-list FILE`: the call_ids to keep, computed elsewhere (an engine over `traces index`).
 * A text list reads like every other id list (id-list.ts); a Parquet file (told by its
 * first bytes) gives its `call_id` column; a folder (an engine's part files) is the union of its files. Either way the result is an `IdList`, checked off as
 * records are read, so ids that matched no record are counted and reported, never ignored.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { compareText } from '../order.js';
import { UserError } from '../errors.js';
import { IdList, readIdListFiles } from './id-list.js';
import { sideOf, type Split } from './split.js';
import { scrubbedCallId, SECRETS_SCRUB } from '../privacy/scrub.js';

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

/**
 * The files of a keep-list folder, in name order: Spark and Trino write one list as a folder of
 * part files (`part-00000-….parquet`), so the folder is the list. Their bookkeeping files
 * (`_SUCCESS`, `.part-….crc`) and sub-folders are no part of it.
 */
function keepListParts(folder: string, flag: string): string[] {
  const parts = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.startsWith('_') && !entry.name.startsWith('.'))
    .map((entry) => path.join(folder, entry.name))
    .sort(compareText);
  if (parts.length === 0) throw new UserError(`${flag} ${folder}: the folder holds no list file (Parquet parts or text lists)`);
  return parts;
}

/**
 * The id under which a record's call_id is on a keep-list, noting that the run met it, or null.
 * A list computed over `traces index` holds call_ids as the index wrote them: scrubbed as
 * export's default scrubs (a klieo run_id or an OTLP id holding a key), so a record is also
 * found by its call_id scrubbed so.
 */
export function metOnKeepList(list: IdList, callId: string): string | null {
  if (list.meet(callId)) return callId;
  const shown = scrubbedCallId(callId, SECRETS_SCRUB);
  return shown !== callId && list.meet(shown) ? shown : null;
}

export async function readKeepList(file: string, flag = '--keep-list'): Promise<IdList> {
  if (!existsSync(file)) throw new UserError(`${flag} ${file}: no such file`);
  const files = statSync(file).isDirectory() ? keepListParts(file, flag) : [file];
  const list = new IdList();
  for (const part of files) {
    if (!startsWithParquetMagic(part)) {
      readIdListFiles(flag, [part], list);
      continue;
    }
    // The engine loads only for Parquet lists: text lists cost nothing at start-up.
    const { readCallIds } = await import('../engine/duckdb.js');
    // A null call_id keeps no record: it is reported with the lines that cannot be a call_id, by its row.
    (await readCallIds(part)).forEach((id, row) => list.add({ id: id ?? 'NULL', file: part, line: row + 1 }, id === null));
  }
  return list;
}

/**
 * The sides a sharded run must force, as one machine's writer settles them (export/dataset.ts):
 * per dataset, when no example hashed to validation although it holds two groups or more, the
 * group nearest to validation (smallest fraction) goes there; when none hashed to training, the
 * group nearest to training (largest fraction) goes there. A host sees part of a dataset only,
 * so the keep-list says so (its `split` column), and each host's export writes every example on
 * the side it hashed to unless the list forces another. `examples` come in file order; returns
 * the indexes of those forced, with their side.
 */
export function forcedSides(examples: readonly { dataset: string; fraction: number | null }[], validationFraction: number): Map<number, Split> {
  const forced = new Map<number, Split>();
  if (validationFraction === 0) return forced;
  const datasets = new Map<string, number[]>();
  examples.forEach((example, i) => {
    if (example.fraction === null) return;
    let list = datasets.get(example.dataset);
    if (list === undefined) datasets.set(example.dataset, (list = []));
    list.push(i);
  });
  for (const members of datasets.values()) {
    const sides = members.map((i) => sideOf(examples[i].fraction!, validationFraction));
    if (sides.includes('training') && sides.includes('validation')) continue;
    const fractions = members.map((i) => examples[i].fraction!);
    const onlyTraining = sides[0] === 'training';
    // One group always trains: it stays where it is when it hashed to training.
    if (onlyTraining && new Set(fractions).size < 2) continue;
    const nearest = onlyTraining ? Math.min(...fractions) : Math.max(...fractions);
    for (const i of members) if (examples[i].fraction === nearest) forced.set(i, onlyTraining ? 'validation' : 'training');
  }
  return forced;
}

/** The sides a keep-list forces (`forcedSides`), by call_id, from its `split` column; null when no part has one (a list of another making). */
export async function readForcedSides(file: string): Promise<Map<string, Split> | null> {
  const files = statSync(file).isDirectory() ? keepListParts(file, '--keep-list') : [file];
  let sides: Map<string, Split> | null = null;
  for (const part of files) {
    if (!startsWithParquetMagic(part)) continue;
    const { readForcedSplits } = await import('../engine/duckdb.js');
    const forced = await readForcedSplits(part);
    if (forced === null) continue;
    sides ??= new Map();
    for (const [id, side] of forced) {
      // A list edited or written by another tool may name any side: only the two an export writes are one.
      if (side !== 'training' && side !== 'validation') {
        throw new UserError(`--keep-list ${part}: call_id ${JSON.stringify(id)} forces the side ${JSON.stringify(side)}; a keep-list's split column holds training, validation or nothing (write it again with traces keep-list)`);
      }
      sides.set(id, side);
    }
  }
  return sides;
}

/**
 * The options a keep-list was made with (`traces keep-list` writes them in the Parquet file's
 * key-value metadata), as an export states its own: a host exporting with other options would
 * apply a list made for another dataset.
 */
export interface KeepListOptions {
  status: string;
  key: string;
  keep: string;
  trajectories: string;
  near_duplicates: number | null;
  group_by: string;
  validation_fraction: number;
}

/** The metadata key the options are written under. */
export const KEEP_LIST_OPTIONS_KEY = 'traces_keep_list';

/** The options a list was made with, from its first Parquet part that says; null for a list of another making. */
export async function readKeepListOptions(file: string): Promise<KeepListOptions | null> {
  const files = statSync(file).isDirectory() ? keepListParts(file, '--keep-list') : [file];
  for (const part of files) {
    if (!startsWithParquetMagic(part)) continue;
    const { readParquetMetadata } = await import('../engine/duckdb.js');
    const text = (await readParquetMetadata(part)).get(KEEP_LIST_OPTIONS_KEY);
    if (text === undefined) continue;
    try {
      return JSON.parse(text) as KeepListOptions;
    } catch {
      return null;
    }
  }
  return null;
}

/** How `options` differ from those the list was made with, one phrase each ("--key inputs,config (the list: inputs,config,module)"). */
export function keepListDifferences(list: KeepListOptions, options: KeepListOptions): string[] {
  const flags: Record<keyof KeepListOptions, string> = {
    status: '--status',
    key: '--key',
    keep: '--keep',
    trajectories: '--trajectories',
    near_duplicates: '--near-duplicates',
    group_by: '--group-by',
    validation_fraction: '--validation-fraction',
  };
  const shown = (value: unknown) => (value === null ? 'off' : String(value));
  return (Object.keys(flags) as (keyof KeepListOptions)[])
    .filter((name) => list[name] !== undefined && list[name] !== options[name])
    .map((name) => `${flags[name]} ${shown(options[name])} (the list: ${shown(list[name])})`);
}
