/** A query's rows as a readable table or as CSV. */
import type { JsonValue, QueryResult } from './duckdb.js';
import { formatCount, plural, printable } from '../format.js';

const MAX_CELL = 60;
/** Rows a table shows at most; --csv and --json print every row. */
export const TABLE_ROWS = 10_000;
const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/;

/**
 * Significant digits a binary float holds (DBL_DIG, FLT_DIG): a sum printed with more shows
 * the noise of its rounding (0.006645600000000001 for 0.0066456). --json keeps the engine's double.
 */
const FLOAT_DIGITS: Readonly<Record<string, number>> = { DOUBLE: 15, FLOAT: 6 };

function text(value: JsonValue, type?: string): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    const digits = type === undefined ? undefined : FLOAT_DIGITS[type];
    return digits === undefined || !Number.isFinite(value) ? String(value) : String(Number(value.toPrecision(digits)));
  }
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Width in terminal cells, near enough: control characters are shown escaped. */
function cell(value: JsonValue, type?: string): string {
  const shown = printable(text(value, type));
  return shown.length > MAX_CELL ? `${shown.slice(0, MAX_CELL - 1)}…` : shown;
}

/**
 * The rows as a table. `more` rows were left out (a table of more than TABLE_ROWS rows is read
 * by no one, and its widths need every row in memory): the footer counts them too.
 */
export function renderTable(result: QueryResult, more = 0): string {
  const numeric = result.types.map((t) => NUMERIC.test(t));
  const cells = result.rows.map((row) => row.map((value, i) => cell(value, result.types[i])));
  const widths = result.columns.map((name, i) => Math.max(cell(name).length, ...cells.map((row) => row[i].length)));
  const line = (values: string[], alignRight: boolean[]) =>
    values.map((v, i) => (alignRight[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ').trimEnd();
  const out = [line(result.columns.map((name) => cell(name)), numeric), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const row of cells) out.push(line(row, numeric));
  const total = result.rows.length + more;
  if (more > 0) out.push(`… ${formatCount(more)} more rows not shown: print them all with --csv or --json`);
  out.push(`(${plural(total, 'row')})`);
  return `${out.join('\n')}\n`;
}

/** A CSV field: quoted where it must be, and printable (newlines kept, inside quotes): --json gives the exact values. */
function csvField(value: JsonValue, type?: string): string {
  if (value === null) return '';
  const t = printable(text(value, type), true);
  return /[",\r\n]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t;
}

/** Rows (or the header, as one row of names) as CSV lines, each ending in a newline; `types` are the columns'. */
export function csvLines(rows: readonly (readonly JsonValue[])[], types: readonly string[] = []): string {
  let out = '';
  for (const row of rows) out += `${row.map((value, i) => csvField(value, types[i])).join(',')}\n`;
  return out;
}
