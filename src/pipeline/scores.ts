/**
 * `--scores FILE`: a score per call_id (a Synalinks reward, a platform's score export, thumbs
 * up and down as 1 and 0), which the pair finder (pairs.ts) compares between answers to one
 * prompt. JSONL (`.jsonl`, `.ndjson`, `.json`: one object a line), CSV (a header row naming
 * `call_id` and `score`) or Parquet (`.parquet`, read by the embedded engine). A score is kept
 * as its recorded text for the report and compared as a number.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { isJsonObject, numberValue, parseJsonText } from '../canonical/json-value.js';
import { csvRows } from './quality/contamination.js';

export interface Score {
  value: number;
  /** As written in the file. */
  text: string;
}

export interface Scores {
  file: string;
  byCallId: Map<string, Score>;
  /** Rows read, and rows without a call_id or a number score (named by line, the first few). */
  rows: number;
  unusable: { line: number; reason: string }[];
  unusableCount: number;
  /** call_ids scored more than once: the last score counts. */
  repeated: number;
}

const NAMED = 5;

function scoreOf(value: unknown): Score | null {
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '' || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
    return finite({ value: Number(text), text });
  }
  if (typeof value === 'boolean') return { value: value ? 1 : 0, text: String(value) };
  const n = numberValue(value);
  return n === null ? null : finite({ value: n, text: String((value as number | String).valueOf()) });
}

/**
 * A score beyond a double's range (1e400, as CSV or Parquet text) is no number to compare:
 * Infinity against Infinity is no margin (NaN), and -Infinity would be every rejected answer.
 */
function finite(score: Score): Score | null {
  return Number.isFinite(score.value) ? score : null;
}

class ScoreTable implements Scores {
  byCallId = new Map<string, Score>();
  rows = 0;
  unusable: { line: number; reason: string }[] = [];
  unusableCount = 0;
  repeated = 0;
  constructor(readonly file: string) {}

  add(line: number, callId: unknown, score: unknown): void {
    this.rows++;
    const id = typeof callId === 'string' ? callId.trim() : typeof callId === 'number' ? String(callId) : '';
    if (id === '') return this.skip(line, 'no call_id');
    const parsed = scoreOf(score);
    if (parsed === null) return this.skip(line, `score ${JSON.stringify(score ?? null)} is not a number`);
    if (this.byCallId.has(id)) this.repeated++;
    this.byCallId.set(id, parsed);
  }

  private skip(line: number, reason: string): void {
    this.unusableCount++;
    if (this.unusable.length < NAMED) this.unusable.push({ line, reason });
  }
}

/** The file's text; a leading byte order mark (Windows tools write one) is no part of it, as in the other files options name (tools.ts). */
function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    throw new UserError(`--scores ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function readJsonLines(file: string, table: ScoreTable): void {
  const lines = readText(file).split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = parseJsonText(text.replace(/\r$/, ''));
    } catch (error) {
      throw new UserError(`--scores ${file}:${i + 1}: not a JSON line (${(error as Error).message}); one object a line with call_id and score`);
    }
    if (!isJsonObject(value)) throw new UserError(`--scores ${file}:${i + 1}: not an object; one object a line with call_id and score`);
    table.add(i + 1, value.call_id, value.score);
  });
}

function readCsv(file: string, table: ScoreTable): void {
  const rows = csvRows(readText(file));
  const header = (rows[0] ?? []).map((name) => name.trim().toLowerCase());
  const id = header.indexOf('call_id');
  const score = header.indexOf('score');
  if (id === -1 || score === -1) throw new UserError(`--scores ${file}:1: the header row must name call_id and score (it names ${header.join(', ') || 'nothing'})`);
  rows.slice(1).forEach((row, i) => {
    if (row.length === 1 && row[0].trim() === '') return;
    table.add(i + 2, row[id], row[score]);
  });
}

async function readParquet(file: string, table: ScoreTable): Promise<void> {
  const { Engine, sqlString } = await import('../engine/duckdb.js');
  const engine = await Engine.open(null);
  try {
    let rows: unknown[][];
    try {
      rows = (await engine.query(`SELECT CAST(call_id AS VARCHAR), CAST(score AS VARCHAR) FROM read_parquet(${sqlString(file)})`)).rows;
    } catch (error) {
      throw new UserError(`--scores ${file}: not a Parquet file with call_id and score columns (${(error as Error).message.replace(/^query failed: /, '')})`);
    }
    rows.forEach((row, i) => table.add(i + 1, row[0], row[1]));
  } finally {
    engine.close();
  }
}

export async function readScores(file: string): Promise<Scores> {
  const table = new ScoreTable(file);
  const ext = path.extname(file).toLowerCase();
  if (ext === '.parquet') await readParquet(file, table);
  else if (ext === '.csv') readCsv(file, table);
  else readJsonLines(file, table);
  if (table.byCallId.size === 0) {
    const first = table.unusable[0];
    throw new UserError(`--scores ${file}: no row holds a call_id and a number score${first === undefined ? '' : ` (line ${first.line}: ${first.reason})`}`);
  }
  return table;
}

/** What the report says of the scores file. */
export function scoresReport(scores: Scores, met: number): Record<string, unknown> {
  return {
    file: scores.file,
    rows: scores.rows,
    scored_call_ids: scores.byCallId.size,
    met_by_records: met,
    repeated_call_ids: scores.repeated,
    unusable_rows: scores.unusableCount,
    unusable: scores.unusable,
  };
}
