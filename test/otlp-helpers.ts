/** Reading OTLP span files in tests: a fixture file's records, or the records of spans built in a test. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TraceRecord } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { readFiles } from '../src/sources/read.js';
import { tempDir } from './helpers.js';

/** Every record of one span file (or of span and log files read together), its damaged lines and its skipped calls by reason. */
export async function readOtlp(file: string | readonly string[]): Promise<{ records: TraceRecord[]; damaged: number; skipped: Record<string, number> }> {
  const discovery = await discover(typeof file === 'string' ? [file] : file);
  assert.ok(discovery.files.length > 0 && discovery.files.every((f) => f.source === 'otlp'), String(file));
  const records: TraceRecord[] = [];
  const skipped: Record<string, number> = {};
  let damaged = 0;
  for await (const batch of readFiles(discovery.files)) {
    records.push(...batch.records);
    damaged += batch.damaged.length;
    for (const [k, n] of Object.entries(batch.skippedCalls ?? {})) skipped[k] = (skipped[k] ?? 0) + n;
  }
  return { records, damaged, skipped };
}

/** The records of spans built in a test, written as one ExportTraceServiceRequest line. */
export async function readSpans(spans: object[]): Promise<TraceRecord[]> {
  const file = path.join(tempDir(), 'spans.jsonl');
  writeFileSync(file, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) + '\n');
  return (await readOtlp(file)).records;
}
