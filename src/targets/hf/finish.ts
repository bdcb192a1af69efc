/**
 * After an hf export's files are written and validated: each JSONL file becomes Parquet (with
 * --file-format parquet), then each dataset gets its card and the trainers' entries (card.ts).
 *
 * The Parquet columns are declared, never inferred: a list of message structs holding the keys
 * the file's messages use (role and content always; reasoning_content, tool_calls, tool_call_id,
 * weight where any message has them), tool calls `{id, type, function: {name, arguments}}` with
 * arguments as text, and `tools` as text. A message lacks no key in a columnar file: those it did
 * not have are null, which the loader step leaves out again (rows.ts `asChat`).
 */
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseJsonText, writeJson } from '../../canonical/json-value.js';
import { compareText } from '../../order.js';
import type { FinishContext, FinishedFile, JsonObject } from '../target.js';
import type { OutputFile } from '../../output/output-dir.js';
import { fileLines } from '../validate.js';
import { LLAMA_FACTORY_DIR, writeCard, type CardDataset, type FileFormat, type HfDatasetLayout, type LlamaFactoryFiles, type RowSchema } from './card.js';
import { sharegptRow } from './llama-factory.js';
import type { Shape } from './rows.js';


/** Message keys in the order a struct holds them, with their column types. */
const MESSAGE_COLUMNS: readonly [string, string][] = [
  ['role', 'VARCHAR'],
  ['content', 'VARCHAR'],
  ['reasoning_content', 'VARCHAR'],
  ['tool_calls', 'STRUCT(id VARCHAR, type VARCHAR, "function" STRUCT(name VARCHAR, arguments VARCHAR))[]'],
  ['tool_call_id', 'VARCHAR'],
  ['weight', 'INTEGER'],
];
export const MESSAGE_KEYS: readonly string[] = MESSAGE_COLUMNS.map(([k]) => k);
const CALL_KEYS: readonly string[] = ['id', 'type', 'function'];


export function listColumns(shape: Shape): string[] {
  return shape === 'messages' ? ['messages'] : ['prompt', 'completion'];
}


/** The name of shard `index` of `count` (0-based) of a split, as the Hub lays a dataset out. */
export function hfFileName(split: 'training' | 'validation', index: number, count: number, fileFormat: FileFormat): string {
  return `data/${split === 'training' ? 'train' : 'validation'}-${String(index).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.${fileFormat}`;
}

/** The DuckDB column types of a schema, for read_json. */
export function duckdbColumns(schema: RowSchema): Record<string, string> {
  const message = `STRUCT(${MESSAGE_COLUMNS.filter(([k]) => schema.messageKeys.includes(k)).map(([k, t]) => `${k} ${t}`).join(', ')})[]`;
  return { ...Object.fromEntries(schema.lists.map((c) => [c, message])), ...(schema.tools ? { tools: 'VARCHAR' } : {}) };
}

/** Every message key and whether tools appear, over every file of a dataset (one schema for all its files). */
async function schemaOf(files: readonly FinishedFile[], lists: readonly string[]): Promise<RowSchema> {
  const keys = new Set<string>(['role', 'content']);
  let longestLine = 0;
  const toolsByFile: boolean[] = [];
  for (const { file } of files) {
    let tools = false;
    for await (const line of fileLines(file.tempPath)) {
      if (!(line instanceof Buffer) || line.length === 0) continue;
      longestLine = Math.max(longestLine, line.length);
      const row = JSON.parse(line.toString('utf8')) as JsonObject;
      if (row.tools !== undefined) tools = true;
      for (const k of Object.keys(row)) if (k !== 'tools' && !lists.includes(k)) throw new Error(`hf rows hold a top-level key no column declares: ${k}`);
      for (const list of lists) {
        for (const m of (row[list] as JsonObject[] | undefined) ?? []) {
          for (const k of Object.keys(m)) keys.add(k);
          for (const call of (m.tool_calls as JsonObject[] | undefined) ?? []) {
            const fn = call.function as JsonObject | undefined;
            if (Object.keys(call).some((k) => !CALL_KEYS.includes(k)) || (fn !== undefined && Object.keys(fn).some((k) => k !== 'name' && k !== 'arguments'))) {
              throw new Error('hf rows hold a tool-call key no column declares');
            }
          }
        }
      }
    }
    toolsByFile.push(tools);
  }
  const unknown = [...keys].filter((k) => !MESSAGE_KEYS.includes(k));
  // The line checks refuse any other key before this runs.
  if (unknown.length > 0) throw new Error(`hf rows hold message keys no column declares: ${unknown.join(', ')}`);
  return { longestLine, lists: [...lists], messageKeys: MESSAGE_KEYS.filter((k) => keys.has(k)), tools: toolsByFile.includes(true), toolsByFile };
}

/**
 * The JSONL file at `file.tempPath` as Parquet in its place, holding as many rows as it had lines.
 * Every key of the lines has a declared column (`schemaOf` refuses any other), so no value is
 * left out; the rows are not read back here, which made the engine hold the file's size in memory
 * (a 216 MB shard: 570 MB of RSS): `traces validate DIR` and the tests read every row back.
 */
async function toParquet(file: FinishedFile, schema: RowSchema): Promise<void> {
  const { runEngineTask } = await import('../../engine/child.js');
  const jsonl = file.file.tempPath;
  const parquet = `${jsonl}.parquet`;
  try {
    // In a child process: out of memory, the engine can abort or fault, which must not end this one.
    const task = { kind: 'jsonl-to-parquet', jsonl, parquet, columns: duckdbColumns(schema), longestLine: schema.longestLine } as const;
    const { rows } = await runEngineTask<{ rows: number }>(task, `writing ${path.basename(file.file.finalPath)}`);
    if (rows !== file.examples) throw new Error(`${path.basename(file.file.finalPath)}: Parquet holds ${rows} rows for ${file.examples} examples written (this is a bug in traces: please report it)`);
    renameSync(parquet, jsonl);
  } finally {
    rmSync(parquet, { force: true });
  }
}

/** LLaMA-Factory's own rows of each file whose examples call tools (llama-factory.ts), beside the data; what it cannot read, counted. */
async function llamaFactoryRows(context: FinishContext, dataset: string, files: readonly FinishedFile[]): Promise<LlamaFactoryFiles> {
  const written: LlamaFactoryFiles = { files: [], skipped: {} };
  for (const f of files) {
    const name = `${LLAMA_FACTORY_DIR}/${path.basename(f.file.finalPath).replace(/\.[a-z]+$/, '.jsonl')}`;
    // Made at its first row: a file of none would be an entry LLaMA-Factory fails on.
    let out: OutputFile | null = null;
    let rows = 0;
    let tools = false;
    for await (const line of fileLines(f.file.tempPath)) {
      if (!(line instanceof Buffer) || line.length === 0) continue;
      const converted = sharegptRow(parseJsonText(line.toString('utf8')) as JsonObject);
      if (!converted.ok) {
        written.skipped[converted.reason] = (written.skipped[converted.reason] ?? 0) + 1;
        continue;
      }
      (out ??= context.output.create(path.join(dataset, name))).writeJsonLine(writeJson(converted.row));
      if (converted.row.tools !== undefined) tools = true;
      rows++;
    }
    if (out !== null) written.files.push({ path: name, split: f.split, examples: rows, tools });
  }
  return written;
}

/** Converts every dataset's files to Parquet (`layout.fileFormat`), then writes its card and the trainers' entries. */
export async function finishHfDataset(context: FinishContext, layout: HfDatasetLayout): Promise<void> {
  const datasets = [...new Set(context.files.map((f) => f.dataset))].sort(compareText);
  const beside: string[] = [];
  // LLaMA-Factory's own rows over every dataset: how many, and those left out by why.
  const ownRows = { rows: 0, left_out: {} as Record<string, number> };
  let madeOwnRows = false;
  for (const dataset of datasets) {
    const files = context.files.filter((f) => f.dataset === dataset);
    const schema = await schemaOf(files, layout.lists);
    // Read from the rows as written, before they become Parquet.
    // Rows of tool calls, of reasoning, or of prompt and completion, are not messages LLaMA-Factory reads whole: it gets its own.
    const own = layout.llamaFactoryRows && (schema.messageKeys.includes('tool_calls') || schema.messageKeys.includes('reasoning_content') || !layout.lists.includes('messages'));
    const llamaFactory = own ? await llamaFactoryRows(context, dataset, files) : null;
    if (llamaFactory !== null) {
      madeOwnRows = true;
      for (const f of llamaFactory.files) beside.push([dataset, f.path].filter((p) => p !== '').join('/'));
      ownRows.rows += llamaFactory.files.reduce((n, f) => n + f.examples, 0);
      for (const [reason, n] of Object.entries(llamaFactory.skipped)) ownRows.left_out[reason] = (ownRows.left_out[reason] ?? 0) + n;
    }
    if (layout.fileFormat === 'parquet') for (const file of files) await toParquet(file, schema);
    const card: CardDataset = {
      folder: dataset,
      // A Parquet file has every column of the dataset's schema; a JSONL file the keys its rows hold.
      files: files.map((f, i) => ({
        path: path.relative(path.join(context.output.dir, dataset), f.file.finalPath).split(path.sep).join('/'),
        split: f.split,
        examples: f.examples,
        tools: layout.fileFormat === 'parquet' ? schema.tools : schema.toolsByFile[i]!,
      })),
      schema,
      sources: context.sources.get(dataset) ?? null,
      llamaFactory,
    };
    for (const name of writeCard(context, card, layout)) beside.push(name);
  }
  // What the summary names besides the data: the card and the trainers' entries.
  context.report.beside_data = beside;
  if (madeOwnRows) {
    context.report.llama_factory = ownRows;
    const leftOut = Object.entries(ownRows.left_out).sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]));
    const total = leftOut.reduce((n, [, k]) => n + k, 0);
    if (total > 0 && Array.isArray(context.report.warnings)) {
      (context.report.warnings as string[]).push(
        `LLaMA-Factory: ${total} of ${ownRows.rows + total} rows are left out of ${LLAMA_FACTORY_DIR}/, which its sharegpt converter and FunctionFormatter would skip or fail on ` +
          `(${leftOut.map(([reason, n]) => `${n} with ${reason}`).join(', ')}); the data files hold them for every other trainer (report.json: llama_factory)`,
      );
    }
  }
}
