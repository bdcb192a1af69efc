/**
 * Planting fake vendor keys in every text field of a source's files, one key per field name
 * (so a leak names its field), and damaging a file: the compliance test's inputs
 * (source-compliance.test.ts).
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { fakeToken } from './fake-secrets.js';
import type { Planted } from './leaks.js';

/** Vendor key shapes the secret detectors know, taken in turn so every field gets a key of its own. */
const SHAPES: ((seed: number) => string)[] = [
  (s) => 'sk-' + 'proj-' + fakeToken(48, s),
  (s) => 'ghp' + '_' + fakeToken(36, s),
  (s) => 'sk' + '_live_' + fakeToken(24, s),
  (s) => 'AI' + 'za' + fakeToken(35, s),
  (s) => 'xo' + 'xb-' + '123456789012-1234567890123-' + fakeToken(24, s),
];

/**
 * Fields whose value says what a record is rather than what was recorded (a kind, a role, a
 * level, a hash, an attribute's name): a key there would change which records there are, not
 * test whether one leaks. So are single lower- or upper-case words (`chat`, `llm`, `GENERATION`) and dotted names (`ai.generateText.doGenerate`).
 */
const STRUCTURAL_FIELDS = new Set(['type', 'run_type', 'role', 'kind', 'level', 'status', 'key', 'finish_reason', 'stop_reason', 'object', 'lc', 'id', 'source']);
/** Ids, hashes and times by their field's name: `trace_id`, `parentObservationId`, `inputs_hash`, `start_time`, `startTimeUnixNano`, `created_at`. */
const STRUCTURAL_SUFFIX = /(?:_id|Id|_ids|Ids|_hash|time|Time|Nano|_at|timestamp|dotted_order)$/;
const ENUM_WORD = /^(?:[a-z_.]{1,40}|[A-Z_]{1,40}|[A-Za-z]+(?:\.[A-Za-z_]+)+)$/;

export class Planter {
  readonly planted = new Map<string, Planted>();
  constructor(private readonly kind: string) {}

  private keyOf(field: string): string {
    const label = `${this.kind} ${field}`;
    let entry = this.planted.get(label);
    if (entry === undefined) {
      const seed = 7000 + this.planted.size * 13 + this.kind.length;
      entry = { label, text: SHAPES[this.planted.size % SHAPES.length]!(seed) };
      this.planted.set(label, entry);
    }
    return entry.text;
  }

  /** The value with a key added to every text in it (JSON held in a text: inside that JSON). */
  value(value: unknown, field: string): unknown {
    if (Array.isArray(value)) return value.map((item) => this.value(item, field));
    if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      // An attribute (OTLP's `{key, value: {stringValue}}`): its key names the field.
      const named = typeof object.key === 'string' && object.value !== null && typeof object.value === 'object' ? object.key : null;
      return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, this.value(v, named !== null && k === 'value' ? named : k)]));
    }
    if (typeof value !== 'string') return value;
    if (STRUCTURAL_FIELDS.has(field) || STRUCTURAL_SUFFIX.test(field) || ENUM_WORD.test(value) || value === '') return value;
    const t = value.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return JSON.stringify(this.value(JSON.parse(value), field));
      } catch {
        // Not JSON after all: a text like any other.
      }
    }
    return `${value} ${this.keyOf(field)}`;
  }

  /** Plants keys in one file of the copy; a file that is neither JSON, JSON Lines nor CSV (Parquet, notes) is left as it is. */
  file(file: string): void {
    const bytes = readFileSync(file);
    if (bytes.includes(0)) return;
    const text = bytes.toString('utf8');
    if (file.endsWith('.csv')) {
      const rows = parseCsv(text, { columns: true, bom: true }) as Record<string, string>[];
      if (rows.length === 0) return;
      const names = Object.keys(rows[0]!);
      const quote = (cell: string) => `"${cell.replaceAll('"', '""')}"`;
      const lines = [names.map(quote).join(','), ...rows.map((row) => names.map((name) => quote(String(this.value(row[name] ?? '', name)))).join(','))];
      writeFileSync(file, lines.join('\n') + '\n');
      return;
    }
    if (!/\.(jsonl|ndjson)$/i.test(file)) {
      try {
        writeFileSync(file, JSON.stringify(this.value(JSON.parse(text), ''), null, 2) + '\n');
        return;
      } catch {
        // Not one JSON document: JSON Lines, or no JSON at all.
      }
    }
    const lines = text.split('\n');
    const planted = lines.map((line) => {
      if (line.trim() === '') return line;
      try {
        return JSON.stringify(this.value(JSON.parse(line), ''));
      } catch {
        return line;
      }
    });
    writeFileSync(file, planted.join('\n'));
  }
}

/** A file read as records of the source, damaged: a JSON Lines or CSV file gets a broken last line, a JSON document loses its end. */
export function damage(file: string): void {
  if (/\.(jsonl|csv)$/i.test(file)) appendFileSync(file, file.endsWith('.csv') ? '"broken\n' : '{"broken": \n');
  else truncateSync(file, Math.max(1, statSync(file).size - 3));
}

