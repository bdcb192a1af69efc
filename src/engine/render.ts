/** A query's rows as a readable table or as CSV. */
import type { JsonValue, QueryResult } from './duckdb.js';
import { formatCount, printable } from '../format.js';

const MAX_CELL = 60;
const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/;

function text(value: JsonValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Width in terminal cells, near enough: control characters are shown escaped. */
function cell(value: JsonValue): string {
  const shown = printable(text(value));
  return shown.length > MAX_CELL ? `${shown.slice(0, MAX_CELL - 1)}…` : shown;
}

export function renderTable(result: QueryResult): string {
  const numeric = result.types.map((t) => NUMERIC.test(t));
  const cells = result.rows.map((row) => row.map(cell));
  const widths = result.columns.map((name, i) => Math.max(cell(name).length, ...cells.map((row) => row[i].length)));
  const line = (values: string[], alignRight: boolean[]) =>
    values.map((v, i) => (alignRight[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ').trimEnd();
  const out = [line(result.columns.map(cell), numeric), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const row of cells) out.push(line(row, numeric));
  out.push(`(${formatCount(result.rows.length)} row${result.rows.length === 1 ? '' : 's'})`);
  return `${out.join('\n')}\n`;
}

function csvField(value: JsonValue): string {
  if (value === null) return '';
  const t = text(value);
  return /[",\r\n]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t;
}

export function renderCsv(result: QueryResult): string {
  const lines = [result.columns.map(csvField).join(',')];
  for (const row of result.rows) lines.push(row.map(csvField).join(','));
  return `${lines.join('\n')}\n`;
}
