/**
 * `traces keep-list`: the global half of a sharded run (docs/engine.md). Prints the keep-list
 * SQL for an engine (`--sql --dialect duckdb|spark|trino`), or runs it in the embedded DuckDB
 * over a folder of indexes (every host's `traces index`), near-duplicates included, and writes
 * the list and the tool definitions inferred once from every index (`--tools-out`), which each
 * host's export reads with `--inferred-tools`.
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { UserError } from '../errors.js';
import { KEY_KINDS, type KeyKind } from '../pipeline/keys.js';
import { standingOf, type KeepRule } from '../pipeline/dedupe.js';
import { DIALECTS, exampleColumns, keepListStatement, survivorsSql, type Dialect, type KeepListQuery } from '../pipeline/keep-list-sql.js';
import { addNearDuplicatesOption, nearDuplicateThreshold, parseStatuses, rootsAfterNearDuplicates } from './curation-options.js';
import { numberOption, printJson, writeSummary } from './common.js';
import { SIGNATURE_WORDS } from '../pipeline/minhash.js';
import { nearDuplicateClusters, SignatureStore } from '../pipeline/near-duplicates.js';
import { Column } from '../pipeline/columns.js';
import { INDEX_COLUMNS } from '../engine/index-columns.js';
import { ToolInference } from '../targets/index.js';
import { parseToolCallFacts } from '../tool-calls.js';
import { checkDistinctOutputs, checkOutputPath } from '../output/output-path.js';
import { Scratch } from '../output/output-file.js';
import { nameTakenError } from '../output/publish.js';
import { formatCount, plural, printable } from '../format.js';
import { STATUSES } from '../record.js';
import { forcedSides, KEEP_LIST_OPTIONS_KEY, type KeepListOptions } from '../pipeline/keep-list.js';
import { outputOption } from './path-options.js';

/** The columns of the index the keep-list reads beyond the first ones (`engine/index-columns.ts`). */
const GLOBAL_COLUMNS = ['trajectory', 'trajectory_inputs', 'trajectory_prefixes', 'minhash', 'tool_calls', 'quality', 'flagged', 'refused', 'example', 'fraction'];

interface KeepListFlags {
  sql?: boolean;
  dialect: Dialect;
  out?: string;
  toolsOut?: string;
  force?: boolean;
  json?: boolean;
  status: string;
  key: KeyKind;
  keep: KeepRule;
  trajectories: 'all' | 'last';
  nearDuplicates?: boolean | string;
  groupBy: 'none' | 'module';
  validationFraction: string;
}

function queryOf(flags: KeepListFlags): KeepListQuery {
  const statuses = flags.status === 'all' ? null : [...parseStatuses(flags.status)].sort();
  const validationFraction = numberOption('--validation-fraction', flags.validationFraction, (value) => value >= 0 && value < 1, 'a number from 0 to below 1');
  return { statuses, key: flags.key, keep: flags.keep, trajectories: flags.trajectories, groupByModule: flags.groupBy === 'module', validationFraction };
}

/** The Parquet files of the indexes named: a file, or every .parquet file under a folder (a host's folder, or a folder of hosts' folders). */
function sourceOf(indexes: string[]): string {
  return `read_parquet(${globsOf(indexes)}, union_by_name = true)`;
}

/** The Parquet files of the indexes named, as a DuckDB list of paths and globs. */
function globsOf(indexes: string[]): string {
  if (indexes.length === 0) throw new UserError('keep-list needs the indexes to read: traces keep-list index/ --out keep.parquet (each host\'s traces index under index/)');
  const globs = indexes.map((given) => {
    if (!existsSync(given)) throw new UserError(`${given}: no such index (a Parquet file of traces index, or a folder of them)`);
    const absolute = path.resolve(given);
    if (!statSync(absolute).isDirectory()) return absolute;
    if (!readdirSync(absolute, { recursive: true }).some((name) => String(name).endsWith('.parquet'))) {
      throw new UserError(`${given}: the folder holds no .parquet file (an index is what traces index --out writes)`);
    }
    return path.join(absolute, '**', '*.parquet');
  });
  return `[${globs.map((g) => `'${g.replaceAll("'", "''")}'`).join(', ')}]`;
}

/** A signature as traces index writes it (`hexWords` reads it). */
const MINHASH_TEXT = new RegExp(`^[0-9a-f]{${SIGNATURE_WORDS * 8}}$`);

const hexWords = (text: string): Uint32Array => {
  const words = new Uint32Array(SIGNATURE_WORDS);
  for (let i = 0; i < SIGNATURE_WORDS; i++) words[i] = parseInt(text.slice(i * 8, i * 8 + 8), 16);
  return words;
};

export function registerKeepList(program: Command): void {
  const command = program
    .command('keep-list')
    .description('The global choice of a sharded run: which records to keep, over every host\'s index (SQL for an engine, or run here in DuckDB), and the tool definitions.')
    .argument('[indexes...]', 'index files or folders written by traces index (a folder is read whole, sub-folders too)')
    .option('--sql', 'print the keep-list query for an engine instead of running it')
    .addOption(new Option('--dialect <engine>', 'the SQL dialect --sql prints').choices([...DIALECTS]).default('duckdb'))
    .addOption(outputOption('--out <file>', 'write the list here (Parquet, a call_id column): copy it to every host, and give it to export --keep-list'))
    .addOption(outputOption('--tools-out <file>', 'write the tool definitions inferred from every index here (JSON): give it to every host\'s export --inferred-tools'))
    .option('--force', 'replace an existing --out or --tools-out')
    .option('--json', 'print a JSON summary on stdout')
    .option('--status <list>', 'statuses kept before dedupe, or all (export keeps ok; dedupe and filter all)', 'ok')
    .addOption(new Option('--key <key>', 'the dedupe key, as export and dedupe take it').choices([...KEY_KINDS]).default('inputs,config,module'))
    .addOption(new Option('--keep <rule>', 'which of a key\'s records is kept').choices(['first', 'last']).default('first'))
    .addOption(new Option('--group-by <what>', 'as export takes it: an example repeats (duplicate_example) only within its dataset').choices(['none', 'module']).default('none'))
    .option('--validation-fraction <f>', 'as export takes it: the list forces the side of a group one machine would move (a dataset none of whose groups hashed to one side)', '0.1')
    .addOption(new Option('--trajectories <mode>', 'last: keep only the last step of an agent run (export\'s default); all: every step').choices(['all', 'last']).default('last'));
  addNearDuplicatesOption(command);
  command
    .addHelpText(
      'after',
      `
Give it the options the hosts' exports get (--status, --key, --keep,
--trajectories, --near-duplicates): the list then holds exactly what one machine
exporting the whole tree keeps. Near-duplicates are clustered here, after the
SQL (--sql prints the SQL part: dedupe and trajectory collapse).

Examples:
  traces keep-list index/ --out keep.parquet --tools-out tools.json
  traces keep-list index/ --near-duplicates 0.9 --out keep.parquet --tools-out tools.json
  traces keep-list --sql --dialect spark > keep.sql
  traces export /data/traces --format openai --keep-list keep.parquet --inferred-tools tools.json --out ds/`,
    )
    .action(async (indexes: string[], flags: KeepListFlags) => {
      indexes = rootsAfterNearDuplicates(flags as never, indexes);
      const query = queryOf(flags);
      const near = nearDuplicateThreshold(flags.nearDuplicates);
      const { validationFraction } = query;
      if (flags.sql) {
        if (near !== null) writeSummary('traces: near-duplicates are clustered by traces keep-list itself, not by the SQL (docs/engine.md)');
        process.stdout.write(keepListStatement(query, flags.dialect));
        return;
      }
      if (flags.out === undefined && flags.toolsOut === undefined) throw new UserError('keep-list needs --out FILE (the list), --tools-out FILE, or --sql');
      const source = sourceOf(indexes);
      const outputs = [
        ...(flags.out === undefined ? [] : [{ flag: '--out', given: flags.out }]),
        ...(flags.toolsOut === undefined ? [] : [{ flag: '--tools-out', given: flags.toolsOut }]),
      ].map((o) => ({ ...o, checked: checkOutputPath({ ...o, kind: 'file', inputs: indexes, force: flags.force === true }) }));
      checkDistinctOutputs(outputs);
      const out = outputs.find((o) => o.flag === '--out')?.checked.absolute ?? null;
      const toolsOut = outputs.find((o) => o.flag === '--tools-out')?.checked.absolute ?? null;
      const { Engine } = await import('../engine/duckdb.js');
      // The engine's spill files; each output waits in a scratch folder of its own beside it, renamed into place.
      const scratch = Scratch.inTemp();
      const engine = await Engine.open(scratch.file('spill'));
      try {
        // An index of an earlier traces has none of the global columns: said in one line, with what to do.
        // Each file on its own: read together (union_by_name), a file of other columns (a keep-list
        // left in the index folder, any Parquet file) would count as records with nulls where it has no column.
        const BASE = INDEX_COLUMNS.map((column) => column.name).filter((name) => !GLOBAL_COLUMNS.includes(name));
        for (const [file, names] of (await engine.query(`SELECT file_name, list(name) FROM parquet_schema(${globsOf(indexes)}) GROUP BY file_name ORDER BY file_name`)).rows) {
          const have = new Set((names as unknown[]).map(String));
          const lacking = BASE.filter((name) => !have.has(name));
          if (lacking.length > 0) {
            throw new UserError(
              `${printable(String(file))} is not an index of traces index (it has no ${lacking.slice(0, 4).join(', ')}${lacking.length > 4 ? ', …' : ''} column): give keep-list the index files or a folder of them alone (a keep-list or other Parquet file in that folder is read as one); an index of an earlier traces is made again with this one (traces index --format TARGET)`,
            );
          }
        }
        const described = new Map((await engine.query(`DESCRIBE SELECT * FROM ${source}`)).rows.map((row) => [String(row[0]), String(row[1])]));
        const missing = GLOBAL_COLUMNS.filter((column) => !described.has(column));
        if (missing.length > 0) {
          throw new UserError(`the indexes lack the columns the keep-list reads (${missing.join(', ')}): they were written by an earlier traces; index the hosts again with this one (traces index --format TARGET)`);
        }
        // A Parquet file of another making (or an index edited since) may hold the names with other types: the queries would fail or read nonsense.
        const mistyped = INDEX_COLUMNS.filter((column) => described.has(column.name) && described.get(column.name) !== column.type);
        if (mistyped.length > 0) {
          throw new UserError(
            `the indexes are not traces index's: ${mistyped.map((column) => `column ${column.name} is ${printable(described.get(column.name)!)}, not ${column.type}`).join('; ')}; index the hosts again with this traces (traces index --format TARGET)`,
          );
        }
        // Without --format the index holds no verdict, example or group: the list can settle none of them.
        const [[withExamples]] = (await engine.query(`SELECT count(fraction) FROM ${source}`)).rows;
        const forTarget = Number(withExamples) > 0;
        if (!forTarget) {
          writeSummary(
            "traces: the indexes were built without --format: the target's refusals, repeated examples (duplicate_example) and the split's moved groups are not in the list, so the hosts' exports may differ from one machine's; build them with traces index --format TARGET",
          );
        }
        const ctes = survivorsSql(query, 'duckdb', source);
        const summary: Record<string, unknown> = {};
        // The tools first: a cell they refuse stops the run before any file is written.
        let definitions: ReturnType<ToolInference['definitions']> | null = null;
        if (toolsOut !== null) {
          const inference = new ToolInference();
          const calls = await engine.stream(`WITH\n${ctes.split(',\nranked AS')[0]}\nSELECT tool_calls, call_id, file, line FROM selected WHERE tool_calls IS NOT NULL`);
          for await (const batch of calls.rows) {
            for (const [cell, callId, file, line] of batch) {
              const facts = parseToolCallFacts(String(cell));
              if (facts === null) {
                inference.dispose();
                throw new UserError(
                  `the index row of call_id ${printable(JSON.stringify(callId))} (${printable(String(file))}:${String(line)}) holds a tool_calls cell traces index does not write: the index was edited or written by another tool; index that host again (traces index --format TARGET)`,
                );
              }
              inference.observeFacts(facts);
            }
          }
          definitions = inference.definitions();
          inference.dispose();
        }
        if (out !== null) {
          // The global drops, counted as one machine's report counts them: the hosts' reports count
          // every record the list leaves out as not_in_keep_list, and their kept records add up to the list.
          const statuses = query.statuses === null ? 'true' : `status IN (${query.statuses.map((s) => `'${s}'`).join(', ')})`;
          const [counts] = (
            await engine.query(
              `WITH\n${ctes}\nSELECT (SELECT count(*) FROM ${source}), (SELECT count(*) FROM ${source} WHERE NOT (${statuses})), ` +
                `(SELECT count(*) FROM ${source} WHERE ${statuses} AND quality IS NOT NULL), (SELECT count(*) FROM ${source} WHERE ${statuses} AND quality IS NULL AND refused IS NOT NULL), ` +
                `(SELECT count(*) FROM selected) - (SELECT count(*) FROM winners), (SELECT count(*) FROM winners) - (SELECT count(*) FROM survivors)`,
            )
          ).rows;
          const [records, status, quality, refused, duplicate, prefix] = counts.map(Number);
          Object.assign(summary, { records, dropped: { status, quality, refused, duplicate, prefix } });
          // Survivors in file order: near-duplicate groups are numbered so, as one machine numbers them.
          const survivors = await engine.stream(`WITH\n${ctes}\nSELECT call_id, status, flagged IS NOT NULL, coalesce(timestamp, 0), minhash, ${exampleColumns(query).join(" || chr(0) || ")}, fraction, ${query.groupByModule ? "program || chr(0) || module" : "''"} FROM survivors ORDER BY file, line`);
          const ids: string[] = [];
          const exampleKeys: string[] = [];
          const sides: { dataset: string; fraction: number | null }[] = [];
          const signatures = near === null ? null : new SignatureStore();
          const timestamps = new Column(Float64Array, 1, 1024);
          const standings = new Column(Uint8Array, 1, 1024);
          for await (const batch of survivors.rows) {
            for (const [id, status, flagged, timestamp, minhash, example, fraction, dataset] of batch) {
              const group = ids.length;
              ids.push(String(id));
              exampleKeys.push(String(example));
              sides.push({ dataset: String(dataset), fraction: typeof fraction === 'number' ? fraction : null });
              if (signatures === null) continue;
              timestamps.ensure(group + 1);
              standings.ensure(group + 1);
              if (typeof minhash === 'string' && !MINHASH_TEXT.test(minhash)) {
                throw new UserError(`the index row of call_id ${printable(JSON.stringify(id))} holds a minhash traces index does not write (${SIGNATURE_WORDS * 8} hex digits): index that host again (traces index --format TARGET)`);
              }
              signatures.set(group, typeof minhash === 'string' ? hexWords(minhash) : null);
              timestamps.data[group] = Number(timestamp);
              standings.data[group] = standingOf(status === 'ok', flagged === true);
            }
          }
          let groups = ids.map((_, group) => group);
          if (signatures !== null) {
            const clusters = nearDuplicateClusters(signatures, { groups: ids.length, timestamps, standings }, flags.keep, near!);
            groups = groups.filter((group) => clusters.keptFor(group) === -1);
            (summary.dropped as Record<string, number>).near_duplicate = ids.length - groups.length;
          }
          // duplicate_example, last, as export decides it while writing: the first of an example in file order is written.
          const written = new Set<string>();
          const keptGroups = groups.filter((group) => !written.has(exampleKeys[group]) && written.add(exampleKeys[group]) !== null);
          (summary.dropped as Record<string, number>).duplicate_example = groups.length - keptGroups.length;
          // The sides the writer of one machine would move a group to (small datasets): each host must write the same.
          const forced = forcedSides(keptGroups.map((group) => sides[group]), validationFraction);
          const kept = keptGroups.map((group, i) => ({ id: ids[group], split: forced.get(i) ?? null }));
          summary.forced_sides = forced.size;
          const listScratch = Scratch.beside(out);
          try {
            const made: KeepListOptions = {
              // As an export states its statuses: every one, sorted, for all.
              status: [...(query.statuses ?? STATUSES)].sort().join(','),
              key: query.key,
              keep: query.keep,
              trajectories: query.trajectories,
              near_duplicates: near,
              group_by: flags.groupBy,
              validation_fraction: validationFraction,
            };
            await writeList(engine, kept, listScratch.file('keep.parquet'), forTarget, made);
            listScratch.commit('keep.parquet', out, flags.force === true, () => nameTakenError('--out', flags.out!, out));
          } finally {
            listScratch.discard();
          }
          summary.kept = kept.length;
          summary.out = out;
        }
        if (toolsOut !== null && definitions !== null) {
          const toolsScratch = Scratch.beside(toolsOut);
          try {
            writeFileSync(toolsScratch.file('tools.json'), `${JSON.stringify(definitions, null, 2)}\n`);
            toolsScratch.commit('tools.json', toolsOut, flags.force === true, () => nameTakenError('--tools-out', flags.toolsOut!, toolsOut));
          } finally {
            toolsScratch.discard();
          }
          summary.tools = definitions.map((d) => d.function.name);
          summary.tools_out = toolsOut;
        }
        engine.close();
        scratch.discard();
        if (flags.json) printJson(summary);
        const parts = [];
        if (summary.kept !== undefined) {
          const dropped = Object.entries(summary.dropped as Record<string, number>).filter(([, n]) => n > 0);
          parts.push(
            `kept ${plural(summary.kept as number, 'record')} of ${formatCount(summary.records as number)} into ${flags.out}` +
              (dropped.length > 0 ? ` (dropped: ${dropped.map(([reason, n]) => `${reason} ${formatCount(n)}`).join(', ')})` : ''),
          );
        }
        if (summary.tools !== undefined) parts.push(`inferred ${plural((summary.tools as string[]).length, 'tool')} into ${flags.toolsOut}`);
        writeSummary(parts.join('; '));
      } catch (error) {
        engine.close();
        scratch.discard();
        throw error;
      }
    });
}

/**
 * The kept call_ids as a Parquet file: a call_id column, and (`withSplit`: the indexes knew the
 * examples' groups) the side a record must go to where the list forces one, else null.
 */
async function writeList(
  engine: { stream(sql: string): Promise<unknown> },
  kept: { id: string; split: string | null }[],
  file: string,
  withSplit: boolean,
  made: KeepListOptions,
): Promise<void> {
  const text = `${file}.csv`;
  const cell = (s: string) => `"${s.replaceAll('"', '""')}"`;
  writeFileSync(text, kept.map(({ id, split }) => `${cell(id)},${split === null ? '' : cell(split)}\n`).join(''));
  const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;
  await engine.stream(
    `COPY (SELECT ${withSplit ? '*' : 'call_id'} FROM read_csv(${quoted(text)}, header = false, delim = ',', quote = '"', escape = '"', new_line = '\\n', columns = {'call_id': 'VARCHAR', 'split': 'VARCHAR'}, auto_detect = false, allow_quoted_nulls = false)) TO ${quoted(file)} (FORMAT parquet, KV_METADATA {${KEEP_LIST_OPTIONS_KEY}: ${quoted(JSON.stringify(made))}})`,
  );
}
