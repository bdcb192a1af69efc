/**
 * One index row from one record. Status, tokens and cost come from `factsOf`, the facts
 * `stats` tallies, so a query over the index and `traces stats` cannot disagree.
 */
import path from 'node:path';
import { isTokenCount, type TraceRecord, type Usage } from '../record.js';
import type { PriceTable } from '../pricing/table.js';
import { conversationKeyInSink, hashesOf, keyOf } from '../pipeline/keys.js';
import { forEachMember, KeyMatcher } from '../canonical/scan.js';
import { ByteSink } from '../canonical/byte-sink.js';
import { writeArray } from '../canonical/canonical.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import type { TraceFile } from '../sources/discover.js';
import { factsOf } from '../stats/tally.js';
import type { IndexRowWriter } from '../engine/index-columns.js';
import { trajectoryDigests } from '../pipeline/collapse.js';
import { conversationWords, signatureOf } from '../pipeline/minhash.js';
import { toolCallFacts } from '../tool-calls.js';
import { sha256Hex } from '../canonical/canonical.js';
import { scrubbedCallId, scrubbedName, scrubbedPath, type ScrubSettings } from '../privacy/scrub.js';

/** Where a file's rows say they come from: its root and its path under it. */
export interface RowPlace {
  root: string;
  file: string;
  /** The two as CSV cells, written once per file rather than once per row. */
  cells: string;
}

/**
 * `scrub`: a Synalinks tree names its folders after the program and module (the root too, when
 * a program or module folder is named as one), so the paths are scrubbed as the names are.
 */
export function placeOf(file: TraceFile, scrub: ScrubSettings | null = null): RowPlace {
  const root = scrubbedPath(file.root, scrub);
  const relative = scrubbedPath(path.relative(file.root, file.path).split(path.sep).join('/'), scrub);
  return { root, file: relative, cells: `${text(root)},${text(relative)}` };
}

const QUOTE = /"/g;

/**
 * CSV cells, typed by column: strings always quoted (so "" is the empty string), null an empty
 * unquoted field, numbers in their shortest exact form, which the engine parses back to the same double.
 */
function text(value: string): string {
  return value.includes('"') ? `"${value.replace(QUOTE, '""')}"` : `"${value}"`;
}

function maybeText(value: string | null): string {
  return value === null ? '' : text(value);
}

function num(value: number | null): string {
  return value === null ? '' : Object.is(value, -0) ? '-0' : String(value);
}

/**
 * A number of a Synalinks record as its recorded text, which the engine parses to the same
 * double (both round correctly): writing the shortest form of a double costs far more than
 * copying the text. Only for values the record gives (null stays null).
 */
function recorded(record: SynalinksRecord, field: 'timestamp' | 'duration' | 'cost', value: number | null): string {
  if (value === null) return '';
  const [start, end] = record.span(field)!;
  return record.raw.toString('latin1', start, end);
}

/** A token count as recorded, or null when unknown or not a whole number (never rounded). */
function tokens(usage: Usage | null, field: keyof Usage): number | null {
  const value = usage?.[field];
  return isTokenCount(value) ? value : null;
}

const TOOL_CALLS = new KeyMatcher(['tool_calls']);
/** How a tool_calls member starts in canonical text, which has no spaces. */
const TOOL_CALLS_MEMBER = Buffer.from('"tool_calls":[');
const key = new Uint32Array(4);

const sink = new ByteSink();
const elementEnds: number[] = [];

/**
 * Whether a message calls a tool (a non-empty tool_calls list), read from the canonical
 * messages: most hold no `"tool_calls":[`, and for the others only the message that holds it
 * is walked. Canonical text keeps the last of a repeated key, as the parsed messages of other
 * sources do. `ends` gives where each message's canonical text ends.
 */
function canonicalToolCalls(text: Buffer, ends: readonly number[]): boolean {
  let element = 0;
  for (let hit = text.indexOf(TOOL_CALLS_MEMBER); hit !== -1; hit = text.indexOf(TOOL_CALLS_MEMBER, ends[element])) {
    while (ends[element] <= hit) element++;
    // Past the array's '[' or the ',' before the element.
    const start = element === 0 ? 1 : ends[element - 1] + 1;
    if (text[start] !== 0x7b) continue;
    let toolCalls = false;
    forEachMember(text, start, ends[element], (keyStart, keyEnd, valueStart) => {
      if (TOOL_CALLS.match(text, keyStart, keyEnd) === 0 && text[valueStart] === 0x5b && text[valueStart + 1] !== 0x5d) toolCalls = true;
    });
    if (toolCalls) return true;
  }
  return false;
}

/**
 * The conversation key, message count and tool calls of a Synalinks record. The canonical
 * bytes are written here, as `keyOf(record, 'conversation')` writes them, so that one pass
 * over the messages also counts them and finds the tool calls.
 */
function synalinksMessageFacts(record: SynalinksRecord): MessageFacts {
  const [start, end] = record.span('messages')!;
  sink.reset();
  elementEnds.length = 0;
  writeArray(record.raw, start, end, sink, false, elementEnds);
  const toolCalls = canonicalToolCalls(sink.view(), elementEnds);
  return { conversation: hex(conversationKeyInSink(sink, key)), count: elementEnds.length, toolCalls };
}

interface MessageFacts {
  conversation: string;
  count: number;
  toolCalls: boolean;
}

function otherMessageFacts(record: TraceRecord): MessageFacts {
  const messages = record.messages();
  return {
    conversation: hex(keyOf(record, 'conversation', key)),
    count: messages.length,
    toolCalls: messages.some((m) => Array.isArray(m.tool_calls) && m.tool_calls.length > 0),
  };
}
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The 16-byte key as 32 hex digits, as `keyHex` writes it. */
function hex(words: Uint32Array): string {
  let out = '';
  for (const w of words) out += HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
  return out;
}

/** Words as hex, 8 digits each (as `hex` writes a key). */
function wordsHex(words: ArrayLike<number>, from = 0, to = words.length): string {
  let out = '';
  for (let i = from; i < to; i++) {
    const w = words[i];
    out += HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
  }
  return out;
}

const TOOL_CALLS_TEXT = Buffer.from('"tool_calls"');

/**
 * The columns the global decisions compare, for an ok record (docs/engine.md, "The keep-list"):
 * the collapse's digests (`trajectoryDigests`, the same chain curation computes), the
 * near-duplicate signature (`signatureOf`) and the tool calls the inference reads
 * (`toolCallFacts`, each call's key as its digest: only its distinctness counts).
 */
function globalCells(record: TraceRecord, ok: boolean, scrub: ScrubSettings | null): string {
  if (!ok) return ',,,,';
  const trajectory = trajectoryDigests(record);
  let cells = trajectory === null ? ',,' : `${text(wordsHex(trajectory.conversation))},${num(trajectory.inputs)},`;
  if (trajectory !== null) {
    const prefixes: string[] = [];
    for (let at = 0; at < trajectory.prefixes.length; at += 4) prefixes.push(wordsHex(trajectory.prefixes, at, at + 4));
    cells += text(prefixes.join(' '));
  }
  const messages = record.messages();
  const signature = signatureOf(conversationWords(messages));
  cells += `,${signature === null ? '' : text(wordsHex(signature))},`;
  if (record.raw.includes(TOOL_CALLS_TEXT)) {
    const facts: string[] = [];
    for (const fact of toolCallFacts(messages)) {
      const nameEnd = fact.indexOf('\n');
      // A tool whose name scrubbing changes has no definition in an export (`scrubDefinitions`): its calls infer none here either.
      if (scrub !== null && scrubbedName(fact.slice(0, nameEnd), scrub) !== fact.slice(0, nameEnd)) continue;
      const keyAt = fact.indexOf('\n', nameEnd + 1) + 1;
      // Its argument names (JSON text) scrubbed as the definitions' are.
      const types = scrubbedName(fact.slice(nameEnd + 1, keyAt - 1), scrub);
      facts.push(`${fact.slice(0, nameEnd)}\n${types}\nh:${sha256Hex(Buffer.from(fact.slice(keyAt)))}`);
    }
    if (facts.length > 0) cells += text(JSON.stringify(facts));
  }
  return cells;
}

/** The target's verdict and example digest of a record (`indexProjection`), when the index is built for a target. */
export type ExampleFacts = (record: TraceRecord) => { quality: string | null; flagged: string | null; refused: string | null; example: string | null; fraction: number | null };

/**
 * `scrub`: the ids and names of the row (call_id, parent_call_id as export writes them;
 * program, module, model, version, tool names) are recorded
 * text, scrubbed as export scrubs the records (`--scrub`), so the index shows no key a record
 * was named with.
 */
export function addRow(rows: IndexRowWriter, record: TraceRecord, place: RowPlace, prices: PriceTable | null, examples: ExampleFacts | null = null, scrub: ScrubSettings | null = null): void {
  const example = examples === null ? null : examples(record);
  const facts = factsOf(record, prices);
  const usage = facts.usage;
  const synalinks = record instanceof SynalinksRecord;
  const messages = synalinks ? synalinksMessageFacts(record) : otherMessageFacts(record);
  // The hashes dedupe keys on: recorded, or recomputed when none was (see `hashesOf`).
  const hashes = hashesOf(record);
  // The columns of INDEX_COLUMNS, in order.
  rows.addLine(
    text(scrubbedCallId(record.callId, scrub)) +
      ',' +
      maybeText(record.parentCallId === null ? null : scrubbedCallId(record.parentCallId, scrub)) +
      ',' +
      text(record.source) +
      ',' +
      place.cells +
      ',' +
      num(record.ref.line) +
      ',' +
      (synalinks ? num(record.ref.offset) + ',' + num(record.raw.length) : ',') +
      ',' +
      text(scrubbedName(record.program, scrub)) +
      ',' +
      text(scrubbedName(record.module, scrub)) +
      ',' +
      maybeText(record.model === null ? null : scrubbedName(record.model, scrub)) +
      ',' +
      maybeText(record.version === null ? null : scrubbedName(record.version, scrub)) +
      ',' +
      text(facts.status) +
      ',' +
      (synalinks ? recorded(record, 'timestamp', facts.timestamp) : num(facts.timestamp)) +
      ',' +
      (synalinks ? recorded(record, 'duration', facts.duration) : num(facts.duration)) +
      ',' +
      text(hashes.inputs) +
      ',' +
      text(hashes.config) +
      ',' +
      text(messages.conversation) +
      ',' +
      num(tokens(usage, 'prompt_tokens')) +
      ',' +
      num(tokens(usage, 'completion_tokens')) +
      ',' +
      num(tokens(usage, 'reasoning_tokens')) +
      ',' +
      num(tokens(usage, 'cached_tokens')) +
      ',' +
      num(tokens(usage, 'total_tokens')) +
      ',' +
      (facts.cost !== null ? (synalinks ? recorded(record, 'cost', facts.cost) : num(facts.cost)) : num(facts.estimatedCost)) +
      ',' +
      (facts.cost !== null ? '"reported"' : facts.estimatedCost !== null ? '"estimated"' : '') +
      ',' +
      num(messages.count) +
      ',' +
      (messages.toolCalls ? 'true' : 'false') +
      ',' +
      globalCells(record, facts.status === 'ok', scrub) +
      ',' +
      (example === null ? ',,,,' : `${maybeText(example.quality)},${maybeText(example.flagged)},${maybeText(example.refused)},${maybeText(example.example)},${num(example.fraction)}`) +
      '\n',
  );
}
