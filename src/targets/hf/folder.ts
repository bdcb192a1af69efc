/**
 * `traces validate DIR --format hf`: an hf dataset folder checked whole. Its card against its
 * files (every split's files exist, every data file is declared, the split sizes, the columns
 * the features name), the LLaMA-Factory entries against the files, then every row of every file
 * (Parquet read back through DuckDB) against the rules of the line checks: roles, tool-call
 * sequences, arguments and tools as JSON text, and no message key the writer never writes.
 * In Parquet, a key a message did not have is null by the file format and left out; in JSONL a
 * null key is one a loader added (`invented_key`). A Parquet message struct with fields beyond
 * the writer's is `schema_invented_keys`: a loader inferred one schema for every row.
 */
import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { ErrorClass, FolderValidation, JsonObject, Target, ValidationReport } from '../target.js';
import { fileLines, validateLines } from '../validate.js';
import { CARD_FILE, LLAMA_FACTORY_FILE, type FileFormat } from './card.js';
import { listColumns, MESSAGE_KEYS } from './finish.js';
import { withoutNulls, type Shape } from './rows.js';
import { alternates } from './llama-factory.js';
import { jsonLine } from '../../canonical/json-value.js';
import { defaultSplits, folderFiles, resolveSplit, type FolderFile } from './data-files.js';
import { readSmallFile } from '../../small-file.js';

/** The most of a card (README.md) or dataset_info.json that validate reads: real ones are a few kilobytes. */
const MAX_CARD_BYTES = 16 << 20;
/** Aliases a card's front matter may expand (the yaml package's default bound). */
const MAX_ALIASES = 100;

interface CardFacts {
  /** Split → declared files or globs, relative to the folder, as the card lists them (resolveSplit reads them). */
  files: Map<string, string[]>;
  /** Split → num_examples declared. */
  sizes: Map<string, number>;
  /** Top-level feature names. */
  features: string[];
}

/**
 * The facts of the card's front matter, parsed as the Hub and `datasets.load_dataset` parse it
 * (huggingface_hub's RepoCard: a YAML load of the text between the `---` lines), so a card they
 * fail on (unclosed brackets, tabs, a key that is no mapping) is refused here too, as is a split
 * whose num_examples is no count. Duplicate keys are taken as PyYAML takes them: the last one.
 */
export function readCard(text: string): CardFacts | string {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (match === null) return 'has no YAML front matter (--- … ---)';
  let document: ReturnType<typeof parseDocument>;
  try {
    document = parseDocument(match[1]!, { uniqueKeys: false });
  } catch (error) {
    return `has front matter the YAML reader gave up on (${(error as Error).message.split('\n')[0]})`;
  }
  if (document.errors.length > 0) {
    const error = document.errors[0]!;
    // Line 1 of the front matter is line 2 of the file.
    const line = error.linePos?.[0]?.line;
    return `has front matter that is not YAML${line === undefined ? '' : ` (line ${line + 1})`}: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}; the Hub and datasets.load_dataset fail to read it (traces export --format hf writes it again)`;
  }
  let data: unknown;
  try {
    // toJS expands aliases: at most 100 (the yaml package's bound), as a card of many would expand without end.
    data = document.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    const why = error instanceof RangeError ? 'nested too deeply to read' : (error as Error).message.split('\n')[0]!;
    return `has front matter that cannot be read safely: ${why}; a card needs no more than ${MAX_ALIASES} YAML aliases and no deep nesting (traces export --format hf writes it again)`;
  }
  // huggingface_hub's RepoCard: "repo card metadata block should be a dict"; an empty block is an empty one.
  if (data !== null && (typeof data !== 'object' || Array.isArray(data))) {
    return `has front matter that is ${Array.isArray(data) ? 'a YAML list' : 'a YAML scalar'}, not a mapping: the Hub refuses it ("repo card metadata block should be a dict"); traces export --format hf writes it again`;
  }
  const files = new Map<string, string[]>();
  const sizes = new Map<string, number>();
  const features: string[] = [];
  const items = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const field = (value: unknown, key: string): unknown => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined);
  const config = items(field(data, 'configs')).find((c) => field(c, 'config_name') === 'default') ?? items(field(data, 'configs'))[0];
  // data_files as datasets' sanitize_patterns takes it: a path or a list of them (the train
  // split), a mapping of split to paths, or a list of {split, path} entries, no split twice.
  const dataFiles = field(config, 'data_files');
  const asList = (paths: unknown): string[] => (Array.isArray(paths) ? paths.map(String) : [String(paths)]);
  if (typeof dataFiles === 'string' || (Array.isArray(dataFiles) && dataFiles.every((entry) => typeof entry === 'string'))) files.set('train', asList(dataFiles));
  else if (Array.isArray(dataFiles)) {
    for (const entry of dataFiles) {
      const split = field(entry, 'split');
      const paths = field(entry, 'path');
      const keys = entry !== null && typeof entry === 'object' ? Object.keys(entry as object) : [];
      if (typeof split !== 'string' || keys.length !== 2 || !(typeof paths === 'string' || Array.isArray(paths))) {
        return `declares a data_files entry that is not {split, path}: ${JSON.stringify(entry)} (datasets raises "Invalid format for data_files entry")`;
      }
      if (files.has(split)) return `declares split ${JSON.stringify(split)} twice in data_files (datasets raises "Some splits are duplicated in data_files")`;
      files.set(split, asList(paths));
    }
  } else if (dataFiles !== null && typeof dataFiles === 'object') {
    for (const [split, paths] of Object.entries(dataFiles as Record<string, unknown>)) files.set(split, asList(paths));
  }
  const info = field(data, 'dataset_info');
  for (const feature of items(field(info, 'features'))) {
    const name = field(feature, 'name');
    if (typeof name === 'string') features.push(name);
  }
  for (const split of items(field(info, 'splits'))) {
    const name = field(split, 'name');
    const n = field(split, 'num_examples');
    if (typeof name !== 'string') continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return `says split ${JSON.stringify(name)} has num_examples ${JSON.stringify(n ?? null)}, not a count of rows (datasets checks a split's size against it)`;
    sizes.set(name, n);
  }
  return { files, sizes, features };
}

/** Field names of the struct a list-of-struct DuckDB type holds (`STRUCT(a VARCHAR, "b" …)[]`), at its first depth. */
export function structFields(type: string): string[] | null {
  const m = /^STRUCT\(([\s\S]*)\)\[\]$/.exec(type.trim());
  if (m === null) return null;
  const fields: string[] = [];
  let depth = 0;
  let start = 0;
  const body = m[1]!;
  for (let i = 0; i <= body.length; i++) {
    const c = body[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if ((c === ',' && depth === 0) || i === body.length) {
      const field = body.slice(start, i).trim();
      const name = /^("(?:[^"]|"")*"|\S+)/.exec(field)?.[1] ?? field;
      fields.push(name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name);
      start = i + 1;
    }
  }
  return fields;
}

async function report(target: Target, options: FolderValidation, file: string, lines: AsyncIterable<string | Buffer> | Iterable<string>, extra: { code: ErrorClass; message: string }[]): Promise<ValidationReport> {
  const r = await validateLines(lines, target, { ...(options.meter !== null ? { meter: options.meter } : {}), tokenLimit: options.tokenLimit }, file);
  if (extra.length === 0) return r;
  const errors = [...r.errors, ...extra.map((e) => ({ code: e.code, severity: 'error' as const, count: 1, lines: [], message: e.message }))];
  return { ...r, errors, ok: false };
}

/**
 * How a folder's rows were written: the target for its files' format and its card's shape, and
 * the list columns (absent: the shape's own). The target passes itself in (hf, or hf-preference
 * writing its own rows through hf's files and card): this module knows no registry.
 */
export interface FolderWriter {
  target(fileFormat: FileFormat, shape: Shape): Target;
  lists?: readonly string[];
}

export async function validateHfFolder(dir: string, options: FolderValidation, writer: FolderWriter): Promise<ValidationReport[]> {
  const cardPath = path.join(dir, CARD_FILE);
  const problems: { code: ErrorClass; message: string }[] = [];
  const cardText = existsSync(cardPath) ? readSmallFile(cardPath, MAX_CARD_BYTES) : null;
  const card = cardText !== null
    ? 'bytes' in cardText
      ? readCard(cardText.bytes.toString('utf8'))
      : cardText.problem
    : `is missing: ${dir} is no hf dataset folder (traces export --format hf writes one; with --group-by module, each DIR/<program>/<module>/ is one: validate those)`;
  if (typeof card === 'string') problems.push({ code: 'card_mismatch', message: `${CARD_FILE} ${card}` });
  // Each split's entries resolved to files as datasets resolves them (paths and globs).
  const files = folderFiles(dir);
  const declared = new Map<string, FolderFile[]>();
  // A card that names no data_files is read from datasets' default: the sharded file names.
  const splits = typeof card === 'string' ? new Map<string, string[]>() : card.files.size > 0 ? card.files : (defaultSplits(files) ?? new Map<string, string[]>());
  for (const [split, patterns] of splits) {
    const resolved = resolveSplit(patterns, files);
    for (const problem of resolved.problems) problems.push({ code: 'card_mismatch', message: `${CARD_FILE}: split ${split} ${problem}` });
    if (resolved.files.length === 0 && resolved.problems.length === 0) problems.push({ code: 'card_mismatch', message: `${CARD_FILE}: split ${split}'s data_files (${patterns.join(', ')}) match no file: datasets finds no data for it` });
    declared.set(split, resolved.files);
  }
  // The target as the card's files say it was written: shape from the features, format from the names.
  const all = [...new Set([...declared.values()].flat().map((f) => f.path))];
  const shape = typeof card !== 'string' && card.features.includes('prompt') ? 'prompt-completion' : 'messages';
  const lists = writer.lists ?? listColumns(shape);
  const fileFormat = all.some((f) => f.endsWith('.jsonl')) ? 'jsonl' : 'parquet';
  const target = writer.target(fileFormat, shape);
  // The data folder's files (hidden ones aside, as datasets passes over them).
  const present = files.filter((f) => f.path.startsWith('data/') && !f.path.split('/').some((part) => part.startsWith('.')));
  for (const f of present) if (!all.includes(f.path)) problems.push({ code: 'card_mismatch', message: `${f.path} is in no split of ${CARD_FILE}: a loader of the card never reads it` });
  // A shard that is a link: datasets reads through it here, a copy on the Hub does not have it.
  const linked = new Set<string>();
  for (const f of [...present, ...[...declared.values()].flat()]) {
    if (f.link === null || linked.has(f.path)) continue;
    linked.add(f.path);
    problems.push({ code: 'linked_file', message: linkedMessage(dir, f.path, f.link) });
  }
  const entries = path.join(dir, LLAMA_FACTORY_FILE);
  const entriesText = existsSync(entries) ? readSmallFile(entries, MAX_CARD_BYTES) : null;
  if (entriesText !== null && !('bytes' in entriesText)) problems.push({ code: 'card_mismatch', message: `${LLAMA_FACTORY_FILE} ${entriesText.problem}` });
  else if (entriesText !== null) {
    try {
      for (const [name, entry] of Object.entries(JSON.parse(entriesText.bytes.toString('utf8')) as Record<string, { file_name?: string; columns?: Record<string, string> }>)) {
        if (typeof entry?.file_name !== 'string' || !existsSync(path.join(dir, entry.file_name))) {
          problems.push({ code: 'card_mismatch', message: `${LLAMA_FACTORY_FILE}: ${name} names ${String(entry?.file_name)}, which does not exist` });
        } else if (lstatSync(path.join(dir, entry.file_name)).isSymbolicLink() && !linked.has(entry.file_name)) {
          linked.add(entry.file_name);
          problems.push({ code: 'linked_file', message: linkedMessage(dir, entry.file_name, entry.file_name) });
        } else if (!statSync(path.join(dir, entry.file_name)).isFile()) {
          problems.push({ code: 'card_mismatch', message: `${LLAMA_FACTORY_FILE}: ${name} names ${entry.file_name}, which is not a regular file` });
        } else {
          // LLaMA-Factory's own rows must each be read whole by its converter; the data files are checked below.
          const own = entry.file_name.endsWith('.jsonl') && !all.includes(entry.file_name);
          const { columns, problem } = await entryFileColumns(path.join(dir, entry.file_name), own);
          if (problem !== null) problems.push({ code: 'card_mismatch', message: `${entry.file_name} ${problem}` });
          // Its loader indexes every declared column of every row: one no row holds is a KeyError.
          for (const column of Object.values(entry.columns ?? {})) {
            if (!columns.has(column)) problems.push({ code: 'card_mismatch', message: `${LLAMA_FACTORY_FILE}: ${name} declares the column ${JSON.stringify(column)}, which no row of ${entry.file_name} holds (LLaMA-Factory raises KeyError: '${column}')` });
          }
        }
      }
    } catch (error) {
      problems.push({ code: 'card_mismatch', message: `${LLAMA_FACTORY_FILE} is not JSON (${(error as Error).message})` });
    }
  }
  const reports: ValidationReport[] = [];
  const rows = new Map<string, number>();
  for (const [split, splitFiles] of declared) {
    for (const { path: f } of splitFiles) {
      const file = path.join(dir, f);
      if (!existsSync(file) || !statSync(file).isFile()) continue;
      let r: ValidationReport;
      if (f.endsWith('.parquet')) r = await parquetReport(target, options, file, lists);
      else r = await report(target, options, file, (async function* () {
        for await (const line of fileLines(file)) if (line instanceof Buffer) yield line;
      })(), []);
      rows.set(split, (rows.get(split) ?? 0) + r.examples);
      reports.push(r);
    }
  }
  if (typeof card !== 'string') {
    for (const [split, n] of card.sizes) {
      if ((rows.get(split) ?? 0) !== n) problems.push({ code: 'card_mismatch', message: `${CARD_FILE} says ${split} has ${n} examples; its files hold ${rows.get(split) ?? 0}` });
    }
  }
  // The card's own report: its problems, no examples.
  const cardReport = await report(target, options, cardPath, [], problems);
  const cleaned = { ...cardReport, errors: cardReport.errors.filter((e) => e.code !== 'no_examples'), warnings: cardReport.warnings.filter((e) => e.code !== 'no_examples' && e.code !== 'too_few_examples') };
  return [{ ...cleaned, ok: cleaned.errors.length === 0 }, ...reports];
}

/** What a shard that is a symbolic link (or lies in a linked folder, `link`) does to its loaders, and what to do. */
/**
 * The columns of a file a LLaMA-Factory entry names, as `datasets` loads it (a JSONL file's: the
 * keys any row holds), and, for its own rows (`own`), the first row its converter would skip.
 */
async function entryFileColumns(file: string, own: boolean): Promise<{ columns: Set<string>; problem: string | null }> {
  const columns = new Set<string>();
  if (file.endsWith('.parquet')) {
    const { readParquetRows } = await import('../../engine/duckdb.js');
    const content = await readParquetRows(file);
    try {
      for (const c of content.columns) columns.add(c.name);
    } finally {
      content.close();
    }
    return { columns, problem: null };
  }
  let problem: string | null = null;
  let n = 0;
  for await (const line of fileLines(file)) {
    n++;
    if (!(line instanceof Buffer)) continue;
    let row: unknown;
    try {
      row = JSON.parse(line.toString('utf8'));
    } catch {
      row = null;
    }
    if (row !== null && typeof row === 'object' && !Array.isArray(row)) for (const key of Object.keys(row)) columns.add(key);
    const messages = (row as { messages?: unknown } | null)?.messages;
    if (own && problem === null && (!Array.isArray(messages) || !alternates(messages as JsonObject[]))) {
      problem = `line ${n}: not messages whose roles alternate as LLaMA-Factory's converter requires (it would skip the row)`;
    }
  }
  return { columns, problem };
}

function linkedMessage(dir: string, file: string, link: string): string {
  let target = '';
  try {
    target = ` (to ${realpathSync(path.join(dir, link))})`;
  } catch {
    // Named without its target.
  }
  return (
    `${file} ${link === file ? `is a symbolic link${target}` : `lies in ${link}, a symbolic link${target}`}: datasets reads through it on this machine, but the folder pushed to the Hub with git holds the link itself ` +
    `(the path it points at, not the rows), and traces never writes through a link: put the file itself there (traces export --format hf writes one)`
  );
}

async function parquetReport(target: Target, options: FolderValidation, file: string, lists: readonly string[]): Promise<ValidationReport> {
  const { readParquetRows } = await import('../../engine/duckdb.js');
  const content = await readParquetRows(file);
  const problems: { code: ErrorClass; message: string }[] = [];
  try {
    for (const column of content.columns) {
      if (lists.includes(column.name)) {
        const fields = structFields(column.type);
        const extra = fields === null ? null : fields.filter((f) => !MESSAGE_KEYS.includes(f));
        if (fields === null) problems.push({ code: 'schema_invented_keys', message: `column ${column.name} is ${column.type}, not a list of message structs` });
        else if (extra!.length > 0) problems.push({ code: 'schema_invented_keys', message: `column ${column.name}'s messages have fields ${extra!.join(', ')}, which traces never writes: a loader merged other rows' keys into one schema` });
        if (/arguments (?!VARCHAR)/.test(column.type)) problems.push({ code: 'schema_invented_keys', message: `column ${column.name}: tool-call arguments are not text: a loader turned them into a struct, which gives every call the keys of all` });
      } else if (column.name === 'tools') {
        if (column.type !== 'VARCHAR') problems.push({ code: 'schema_invented_keys', message: `column tools is ${column.type}, not text: a loader turned the definitions into structs, which gives every tool the keys of all` });
      } else problems.push({ code: 'card_mismatch', message: `column ${column.name} is not an hf column (${[...lists, 'tools'].join(', ')})` });
    }
    const names = content.columns.map((c) => c.name);
    async function* lines(): AsyncGenerator<string> {
      for await (const batch of content.batches) for (const row of batch) yield jsonLine(JSON.stringify(withoutNulls(Object.fromEntries(names.map((n, i) => [n, row[i]])))));
    }
    return await report(target, options, file, lines(), problems);
  } finally {
    content.close();
  }
}
