/** `traces sql`: SQL over the record index (the `records` view), from a Parquet index or built on the fly. */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { UserError } from '../errors.js';
import type { Engine as EngineType, JsonValue } from '../engine/duckdb.js';
import { holdsNoStatement, NO_STATEMENT } from '../engine/statements.js';
import { loadPriceTable } from '../pricing/table.js';
import type { SourceKind } from '../record.js';
import { Scratch } from '../output/output-file.js';
import { csvLines, renderTable, TABLE_ROWS } from '../engine/render.js';
import { addPricesOption, addSourceOption, findTraceFiles, JsonArrayOut, ROOTS_DESCRIPTION, writeOut } from './common.js';

interface SqlFlags {
  index?: string;
  json?: boolean;
  csv?: boolean;
  verbose?: boolean;
  source?: SourceKind;
  prices?: string;
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
    .option('-v, --verbose', 'list the files skipped as not being traces');
  addSourceOption(command);
  addPricesOption(command);
  command
    .addHelpText(
      'after',
      `
Without --index, the index of the roots is built first (in a scratch folder,
removed afterwards). The columns are those of traces index (see traces index
--help). Integers beyond 2^53, dates and decimals print as text in --json.
A query reads the index only and writes no file (COPY, EXPORT, ATTACH and
INSTALL are refused): print rows with --csv or --json and redirect them.
An error in the query is one line on stderr, exit code 2. A table shows the
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
      const { Engine } = await import('../engine/duckdb.js');
      let scratch: Scratch | null = null;
      let engine: EngineType | null = null;
      try {
        if (flags.index !== undefined) {
          engine = await Engine.open(null);
          const index = path.resolve(flags.index);
          const folder = statSync(index).isDirectory();
          try {
            await engine.attachIndex(index, folder);
          } catch (error) {
            throw new UserError(`--index ${flags.index}: not a readable Parquet index (${(error as Error).message.split('\n')[0]})`);
          }
          await engine.confine(folder ? { directories: [index], files: [] } : { directories: [], files: [index] });
        } else {
          const prices = loadPriceTable(flags.prices);
          const discovery = await findTraceFiles(roots, flags);
          scratch = Scratch.inTemp();
          engine = await Engine.open(scratch.file('spill'), { memoryLimit: '256MB' });
          const { buildIndex, reportDamage } = await import('../index/build.js');
          reportDamage(await buildIndex(engine, discovery, prices, scratch.file('parts')));
          await engine.confine({ directories: [scratch.dir], files: [] });
        }
        const answer = await engine.stream(query, { readOnly: true });
        if (flags.json) {
          const out = new JsonArrayOut();
          for await (const batch of answer.rows) for (const row of batch) await out.add(Object.fromEntries(answer.columns.map((name, i) => [name, row[i]])));
          await out.end();
        } else if (flags.csv) {
          await writeOut(csvLines([answer.columns]));
          for await (const batch of answer.rows) await writeOut(csvLines(batch));
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
