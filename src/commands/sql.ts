/** `traces sql`: SQL over the record index (the `records` view), from a Parquet index or built on the fly. */
import { constants, copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { UserError } from '../errors.js';
import type { Engine as EngineType, JsonValue } from '../engine/duckdb.js';
import { holdsNoStatement, NO_STATEMENT } from '../engine/statements.js';
import { loadPriceTable } from '../pricing/table.js';
import type { SourceKind } from '../record.js';
import type { Scratch } from '../output/output-file.js';
import { childScratch, inEngineChild, runEngineChild } from '../engine/child.js';
import { csvLines, renderTable, TABLE_ROWS } from '../engine/render.js';
import { addPricesOption, addSourceOption, findTraceFiles, JsonArrayOut, ROOTS_DESCRIPTION, writeOut } from './common.js';
import { addScrubOptions, scrubSettings, type ScrubFlags } from './scrub-option.js';

interface SqlFlags extends ScrubFlags {
  index?: string;
  json?: boolean;
  csv?: boolean;
  verbose?: boolean;
  source?: SourceKind;
  prices?: string;
  timeout?: string;
}

export function registerSql(program: Command): void {
  const command = program
    .command('sql')
    .description('Run SQL over the records (a view named records, with the columns of traces index), in an embedded DuckDB.')
    .argument('<query>', 'the SQL query; the table is records')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--index <path>', 'query this index (a Parquet file or a folder of part files) instead of reading the roots')
    .option('--json', 'print the rows as a JSON array of objects')
    .option('--csv', 'print the rows as CSV with a header line')
    .option('--timeout <seconds>', 'stop the query (and the index build) after this long: exit 2, nothing left behind')
    .option('-v, --verbose', 'list the files skipped as not being traces');
  addScrubOptions(command, 'without --index, the names of the index built (as traces index --scrub)');
  addSourceOption(command);
  addPricesOption(command);
  command
    .addHelpText(
      'after',
      `
Without --index, the index of the roots is built first (in a scratch folder,
removed afterwards). The columns are those of traces index (see traces index
--help). Integers beyond 2^53, dates and decimals print as text in --json.
A query reads the index only and writes no file: the engine runs in a scratch
folder of its own (removed afterwards) holding a copy of the index, and its
locked configuration lets no query read or write any other file (COPY, EXPORT,
ATTACH, INSTALL and SET are refused): print rows with --csv or --json and
redirect them.
An error in the query is one line on stderr, exit code 2, and so is a query
stopped by --timeout; Ctrl-C stops a running query at once (exit 130). The
engine runs in a child process: whatever it meets, its scratch folder is
removed and the command ends with one line. A table shows the
first 10,000 rows and counts the rest; --csv and --json print every row as the
engine makes them, in memory that does not grow with the answer.

Examples:
  traces sql "SELECT model, count(*), sum(cost_usd) FROM records WHERE status = 'ok' GROUP BY 1 ORDER BY 3 DESC" ~/.synalinks
  traces sql "SELECT program, module, avg(duration) FROM records GROUP BY ALL" --index traces.parquet --csv
  traces sql "SELECT call_id FROM records WHERE has_tool_calls AND status = 'exception'" samples/synalinks --json`,
    )
    .action(async (query: string, roots: string[], flags: SqlFlags) => {
      if (flags.json && flags.csv) throw new UserError('--json and --csv: choose one output form');
      // Before the index of a big tree is built for it.
      if (holdsNoStatement(query)) throw new UserError(NO_STATEMENT);
      if (flags.index !== undefined && roots.length > 0) throw new UserError('--index and roots: query either an index or the traces under roots, not both');
      if (flags.index !== undefined && !existsSync(flags.index)) {
        throw new UserError(`--index ${flags.index}: no such file or folder (write one with traces index --out ${flags.index})`);
      }
      const timeout = flags.timeout === undefined ? undefined : Number(flags.timeout);
      if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0 && timeout <= 2_000_000)) {
        throw new UserError(`--timeout ${flags.timeout}: give the seconds a query may run, a number above 0 (e.g. --timeout 30)`);
      }
      // The engine runs in a child process, which this one watches (src/engine/child.ts).
      if (!inEngineChild()) {
        await runEngineChild(timeout);
        return;
      }
      const { Engine } = await import('../engine/duckdb.js');
      // The run's own folder (private to this user, removed afterwards) is the only place the engine may
      // read or write once the user's SQL runs: its spill files, and the index (built there, or copied there).
      let scratch: Scratch | null = null;
      let engine: EngineType | null = null;
      try {
        if (flags.index !== undefined) {
          scratch = childScratch()!;
          const index = path.resolve(flags.index);
          const folder = statSync(index).isDirectory();
          // A copy, as no setting makes an allowed file read-only: a query may write over what it can read.
          const copy = scratch.file('index');
          copyIndex(index, folder, copy);
          engine = await Engine.open(scratch.file('spill'));
          try {
            await engine.attachIndex(copy, folder);
          } catch (error) {
            // The engine names the copy: the user knows the file by its own name.
            const reason = (error as Error).message.split('\n')[0]!.replaceAll(copy, index);
            throw new UserError(`--index ${flags.index}: not a readable Parquet index (${reason})`);
          }
        } else {
          const prices = loadPriceTable(flags.prices);
          const scrub = scrubSettings(flags);
          const discovery = await findTraceFiles(roots, { ...flags, names: scrub });
          // Once the inputs are known: a temporary folder inside them is refused.
          scratch = childScratch()!;
          engine = await Engine.open(scratch.file('spill'), { memoryLimit: '256MB' });
          const { buildIndex, reportDamage } = await import('../index/build.js');
          reportDamage(await buildIndex(engine, discovery, prices, scratch.file('parts'), false, null, null, scrub));
        }
        await engine.confine(scratch.dir);
        const answer = await engine.stream(query, { readOnly: true });
        if (flags.json) {
          const out = new JsonArrayOut();
          for await (const batch of answer.rows) for (const row of batch) await out.add(Object.fromEntries(answer.columns.map((name, i) => [name, row[i]])));
          await out.end();
        } else if (flags.csv) {
          await writeOut(csvLines([answer.columns]));
          for await (const batch of answer.rows) await writeOut(csvLines(batch, answer.types));
        } else {
          const shown: JsonValue[][] = [];
          let more = 0;
          for await (const batch of answer.rows) {
            for (const row of batch) {
              if (shown.length < TABLE_ROWS) shown.push(row);
              else more++;
            }
          }
          await writeOut(renderTable({ columns: answer.columns, types: answer.types, rows: shown }, more));
        }
      } finally {
        engine?.close();
        scratch?.discard();
      }
    });
}

/**
 * The index's Parquet files copied to `copy`: the file, or a folder of the folder's *.parquet
 * files (what the view reads). A clone where the file system shares blocks, else a copy.
 */
function copyIndex(index: string, folder: boolean, copy: string): void {
  try {
    if (!folder) {
      copyFileSync(index, copy, constants.COPYFILE_FICLONE);
      return;
    }
    mkdirSync(copy);
    for (const entry of readdirSync(index, { withFileTypes: true })) {
      if (entry.name.endsWith('.parquet') && !entry.isDirectory()) copyFileSync(path.join(index, entry.name), path.join(copy, entry.name), constants.COPYFILE_FICLONE);
    }
  } catch (error) {
    throw new UserError(`--index: could not copy the index into the run's scratch folder (${(error as Error).message}): free some space in the temporary folder (TMPDIR)`);
  }
}
