/**
 * The keep-list as SQL over `traces index` rows: the global decisions of a one-machine run
 * (curate.ts), made by an engine over every host's index, with the same tie-breaks.
 *
 *   selected   the records the record-local stages keep (--status)
 *   winners    dedupe: one per key; an ok record first, of those one no quality stage
 *              flagged (`flagged` null), then the earliest timestamp
 *              (--keep last: the latest), ties to the earlier file and line (the later with last)
 *   holders    per prefix digest of a winner's conversation, the winner with the most
 *              inputs that holds it (ties: the earlier file and line)
 *   survivors  trajectory collapse (--trajectories last): a winner whose whole conversation
 *              is a holder's prefix gives way to that holder
 *
 * Near-duplicates then cluster the survivors by their MinHash bands (union-find); that stage
 * is not SQL (an engine needs connected components for it): `traces keep-list` runs it in
 * process over the survivors, with the code a one-machine run uses.
 * The text differs by dialect only where the engines differ: how a list is exploded into
 * rows (DuckDB `unnest`, Spark `explode`, Trino `CROSS JOIN UNNEST`) and how a
 * list-valued string is split (`string_split`, `split`, `split`).
 */
import type { KeyKind } from './keys.js';
import type { KeepRule } from './dedupe.js';

export const DIALECTS = ['duckdb', 'spark', 'trino'] as const;
export type Dialect = (typeof DIALECTS)[number];

export interface KeepListQuery {
  /** Statuses kept (null: all). */
  statuses: readonly string[] | null;
  key: KeyKind;
  keep: KeepRule;
  trajectories: 'all' | 'last';
  /** export --group-by module: an example repeats only within its program and module's dataset. */
  groupByModule: boolean;
  /** export --validation-fraction: the sides the list settles (`forcedSides`). */
  validationFraction: number;
}

/** The columns a key groups on: the hashes dedupe keys on, within one program and module for the default key. */
export function keyColumns(key: KeyKind): string[] {
  switch (key) {
    case 'inputs,config,module':
      return ['inputs_hash', 'config_hash', 'program', 'module'];
    case 'inputs,config':
      return ['inputs_hash', 'config_hash'];
    case 'inputs':
      return ['inputs_hash'];
    case 'conversation':
      return ['conversation_hash'];
  }
}

function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The common table expressions up to `survivors` (the collapse's survivors, every column of
 * the index), over the table `source`. The last CTE is named `survivors`.
 */
export function survivorsSql(query: KeepListQuery, dialect: Dialect, source: string): string {
  // --keep first: the earliest timestamp, ties to file order; last: the latest, ties to the later (dedupe.ts).
  const direction = query.keep === 'first' ? 'ASC' : 'DESC';
  // `timestamp` is a type name too: quoted, as each dialect quotes a name.
  const timestamp = dialect === 'spark' ? '`timestamp`' : '"timestamp"';
  // The standing of dedupe.ts: ok and unflagged, ok and flagged, then the rest.
  const order = `CASE WHEN status <> 'ok' THEN 2 WHEN flagged IS NOT NULL THEN 1 ELSE 0 END, coalesce(${timestamp}, 0) ${direction}, file ${direction}, line ${direction}`;
  // The record-local stages: --status, the quality stages and the target's verdict (an index built with --format; null otherwise).
  const where = `\n  WHERE quality IS NULL AND refused IS NULL${query.statuses === null ? '' : ` AND status IN (${query.statuses.map(quoted).join(', ')})`}`;
  const ctes = [
    `selected AS (\n  SELECT * FROM ${source}${where}\n)`,
    `ranked AS (\n  SELECT *, row_number() OVER (PARTITION BY ${keyColumns(query.key).join(', ')} ORDER BY ${order}) AS key_rank\n  FROM selected\n)`,
    `winners AS (\n  SELECT * FROM ranked WHERE key_rank = 1\n)`,
  ];
  if (query.trajectories === 'all') {
    ctes.push('survivors AS (\n  SELECT * FROM winners\n)');
    return ctes.join(',\n');
  }
  const prefixes =
    dialect === 'duckdb'
      ? `SELECT call_id, trajectory_inputs, file, line, unnest(string_split(trajectory_prefixes, ' ')) AS digest\n  FROM winners WHERE trajectory IS NOT NULL AND trajectory_prefixes <> ''`
      : dialect === 'spark'
        ? `SELECT call_id, trajectory_inputs, file, line, explode(split(trajectory_prefixes, ' ')) AS digest\n  FROM winners WHERE trajectory IS NOT NULL AND trajectory_prefixes <> ''`
        : `SELECT w.call_id, w.trajectory_inputs, w.file, w.line, p.digest\n  FROM winners w CROSS JOIN UNNEST(split(w.trajectory_prefixes, ' ')) AS p (digest)\n  WHERE w.trajectory IS NOT NULL AND w.trajectory_prefixes <> ''`;
  ctes.push(
    `prefixes AS (\n  ${prefixes}\n)`,
    `holders AS (\n  SELECT digest, call_id AS holder FROM (\n    SELECT digest, call_id, row_number() OVER (PARTITION BY digest ORDER BY trajectory_inputs DESC, file, line) AS holder_rank\n    FROM prefixes\n  ) ranked_holders WHERE holder_rank = 1\n)`,
    `survivors AS (\n  SELECT w.* FROM winners w LEFT JOIN holders h ON h.digest = w.trajectory\n  WHERE h.holder IS NULL OR h.holder = w.call_id\n)`,
  );
  return ctes.join(',\n');
}

/** Where the printed query reads the indexes and writes the list, per dialect. */
const PLACES: Record<Dialect, { source: string; head: string; tail: string }> = {
  duckdb: { source: "read_parquet('index/*/*.parquet')", head: 'COPY (\n', tail: "\n) TO 'keep.parquet' (FORMAT parquet);" },
  spark: { source: 'parquet.`s3://bucket/index/*/`', head: "INSERT OVERWRITE DIRECTORY 's3://bucket/keep/' USING parquet\n", tail: ';' },
  trino: { source: 'hive.traces.records', head: 'CREATE TABLE hive.traces.keep WITH (format = \'PARQUET\') AS\n', tail: ';' },
};

/** The columns an example repeats within: its dataset (--group-by module: a program and module's). */
export function exampleColumns(query: KeepListQuery): string[] {
  return ['coalesce(example, call_id)', ...(query.groupByModule ? ['program', 'module'] : [])];
}

/**
 * The whole statement `traces keep-list --sql` prints: the call_ids to keep, and the side a
 * record must go to where one machine's writer would move its group (`forcedSides` in
 * pipeline/keep-list.ts: a dataset none of whose groups hashed to one side), written where the
 * dialect writes.
 */
export function keepListStatement(query: KeepListQuery, dialect: Dialect, source = PLACES[dialect].source): string {
  const place = PLACES[dialect];
  // duplicate_example: of the survivors with the same example, the first in file order is written.
  const examples = `examples AS (\n  SELECT *, row_number() OVER (PARTITION BY ${exampleColumns(query).join(', ')} ORDER BY file, line) AS example_rank\n  FROM survivors\n)`;
  const kept = 'kept AS (\n  SELECT * FROM examples WHERE example_rank = 1\n)';
  if (query.validationFraction === 0) {
    return `${place.head}WITH\n${survivorsSql(query, dialect, source)},\n${examples},\n${kept}\nSELECT call_id, CAST(NULL AS VARCHAR) AS split FROM kept${place.tail}\n`;
  }
  // A double, as traces compares it: a decimal literal would be compared as a decimal.
  const vf = `CAST(${query.validationFraction} AS DOUBLE)`;
  const by = query.groupByModule ? ['program', 'module'] : [];
  const datasets =
    `datasets AS (\n  SELECT ${by.map((c) => `${c}, `).join('')}sum(CASE WHEN fraction < ${vf} THEN 1 ELSE 0 END) AS validation_examples,\n` +
    `    sum(CASE WHEN fraction < ${vf} THEN 0 ELSE 1 END) AS training_examples,\n` +
    `    count(DISTINCT fraction) AS groups, min(fraction) AS nearest_validation, max(fraction) AS nearest_training\n` +
    `  FROM kept WHERE fraction IS NOT NULL${by.length > 0 ? `\n  GROUP BY ${by.join(', ')}` : ''}\n)`;
  const join = by.length > 0 ? `LEFT JOIN datasets d ON ${by.map((c) => `d.${c} = k.${c}`).join(' AND ')}` : 'CROSS JOIN datasets d';
  const select =
    `SELECT k.call_id, CASE\n` +
    `  WHEN d.validation_examples = 0 AND d.groups >= 2 AND k.fraction = d.nearest_validation THEN 'validation'\n` +
    `  WHEN d.training_examples = 0 AND k.fraction = d.nearest_training THEN 'training'\n` +
    `END AS split\nFROM kept k ${join}`;
  return `${place.head}WITH\n${survivorsSql(query, dialect, source)},\n${examples},\n${kept},\n${datasets}\n${select}${place.tail}\n`;
}
