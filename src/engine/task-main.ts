/**
 * The entry of a child process that runs one engine task (`runEngineTask` in child.ts): a JSON
 * task as its argument, the result as JSON on stdout. Out of memory, DuckDB may throw, abort
 * (std::bad_alloc, exit 134) or fault (139): in a process of its own, none of that reaches the
 * command, whose parent says it in one line and removes what the task left.
 */
import { firstLine, jsonlToParquet, parquetRowCount } from './duckdb.js';
import type { EngineTask } from './child.js';

async function run(task: EngineTask): Promise<unknown> {
  switch (task.kind) {
    case 'jsonl-to-parquet':
      await jsonlToParquet(task.jsonl, task.parquet, task.columns, task.longestLine);
      return { rows: await parquetRowCount(task.parquet) };
  }
}

try {
  process.stdout.write(JSON.stringify({ result: await run(JSON.parse(process.argv[2]!) as EngineTask) }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: firstLine(error) }));
}
