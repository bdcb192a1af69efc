/**
 * One index row from one record. Status, tokens and cost come from `factsOf`, the facts
 * `stats` tallies, so a query over the index and `traces stats` cannot disagree.
 */
import path from 'node:path';
import type { TraceRecord, Usage } from '../record.js';
import type { PriceTable } from '../pricing/table.js';
import { keyHex, keyOf } from '../pipeline/keys.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import type { TraceFile } from '../sources/discover.js';
import { factsOf } from '../stats/tally.js';
import { INDEX_COLUMNS, type IndexBatch } from './columns.js';

/** Where a file's rows say they come from: its root and its path under it. */
export interface RowPlace {
  root: string;
  file: string;
}

export function placeOf(file: TraceFile): RowPlace {
  return { root: file.root, file: path.relative(file.root, file.path).split(path.sep).join('/') };
}

/** A token count as recorded, or null when unknown or not a whole number (never rounded). */
function tokens(usage: Usage | null, field: keyof Usage): number | null {
  const value = usage?.[field];
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

function hasToolCalls(record: TraceRecord): boolean {
  // Most records call no tool: their bytes never hold the word, and their messages need not be built.
  if (record instanceof SynalinksRecord && !record.raw.includes('"tool_calls"')) return false;
  return record.messages().some((m) => Array.isArray(m.tool_calls) && m.tool_calls.length > 0);
}

const key = new Uint32Array(4);

export function addRow(batch: IndexBatch, record: TraceRecord, place: RowPlace, prices: PriceTable | null): void {
  const facts = factsOf(record, prices);
  const usage = facts.usage;
  const cost = facts.cost ?? facts.estimatedCost;
  const synalinks = record instanceof SynalinksRecord;
  const values = [
    record.callId,
    record.parentCallId,
    record.source,
    place.root,
    place.file,
    record.ref.line,
    synalinks ? record.ref.offset : null,
    synalinks ? record.raw.length : null,
    record.program,
    record.module,
    record.model,
    record.version,
    facts.status,
    facts.timestamp,
    facts.duration,
    record.inputsHash,
    record.configHash,
    keyHex(keyOf(record, 'conversation', key)),
    tokens(usage, 'prompt_tokens'),
    tokens(usage, 'completion_tokens'),
    tokens(usage, 'reasoning_tokens'),
    tokens(usage, 'cached_tokens'),
    tokens(usage, 'total_tokens'),
    cost,
    facts.cost !== null ? 'reported' : facts.estimatedCost !== null ? 'estimated' : null,
    synalinks ? record.messageCount() : record.messages().length,
    hasToolCalls(record),
  ];
  for (let i = 0; i < INDEX_COLUMNS.length; i++) batch.columns[i].push(values[i]);
  batch.rows++;
}
