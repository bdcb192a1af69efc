/**
 * A record as screen rows: the conversation as a chat (role headers, folded system prompt
 * and reasoning, tool calls with pretty arguments, tool results, structured completions as
 * pretty JSON, the exception in red) and the metadata. Pure: record bytes in, rows out.
 */
import type { SourceKind } from '../record.js';
import type { SynalinksRecord } from '../sources/synalinks-record.js';
import { versionNameOf } from '../sources/registry.js';
import { DEFAULT_KEY, keyHex, keyOf } from '../pipeline/keys.js';
import type { EntryInfo } from './index-store.js';
import {
  elementsOf,
  membersOf,
  prettyJson,
  prettyJsonText,
  scanMessages,
  shownStringAt,
  stringAt,
  type MessageSpans,
  type Span,
} from './record-text.js';
import { formatBytes, formatUsd, formatDuration, formatLongTime, sanitize, wrap } from './text.js';
import { plural } from '../format.js';

export interface Seg {
  text: string;
  color?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  inverse?: boolean;
  underline?: boolean;
}

export interface Row {
  segs: Seg[];
  /** Set on the header row of a foldable block: the fold's id. */
  fold?: string;
  /** Set on the rows a fold holds (shown when it is open): the fold's id. */
  inFold?: string;
}

type Style = Omit<Seg, 'text'>;

export const ROLE_COLORS: Record<string, string> = {
  system: 'magenta',
  developer: 'magenta',
  user: 'cyan',
  assistant: 'green',
  tool: 'yellow',
  function: 'yellow',
};

/** Text blocks longer than this are cut: a record can hold megabytes in one message. */
const MAX_BLOCK_CHARS = 100_000;

export function rowText(row: Row): string {
  return row.segs.map((s) => s.text).join('');
}

class RowBuilder {
  readonly rows: Row[] = [];
  /** The open fold whose rows are being pushed, if any. */
  inFold: string | undefined = undefined;
  constructor(readonly width: number) {}

  push(segs: Seg[], fold?: string): void {
    if (fold !== undefined) this.rows.push({ segs, fold });
    else this.rows.push(this.inFold === undefined ? { segs } : { segs, inFold: this.inFold });
  }

  blank(): void {
    this.rows.push({ segs: [] });
  }

  /** Wrapped text, each row prefixed by `indent`; `leftOut` bytes of it were never decoded (`shownStringAt`). */
  text(text: string, indent: string, style: Style = {}, leftOut = 0): void {
    let t = text.replace(/\s+$/, '');
    let cut = leftOut > 0 ? `… (${formatBytes(leftOut)} more not shown)` : '';
    if (t.length > MAX_BLOCK_CHARS) {
      cut = `… (${formatBytes(Buffer.byteLength(t.slice(MAX_BLOCK_CHARS)) + leftOut)} more not shown)`;
      t = t.slice(0, MAX_BLOCK_CHARS);
    }
    for (const row of wrap(sanitize(t), this.width - indent.length)) this.push([{ text: indent }, { text: row, ...style }]);
    if (cut !== '') this.push([{ text: indent }, { text: cut, dim: true }]);
  }

  /** Pretty JSON lines, wrapped; continuation rows keep the line's indentation. */
  json(lines: string[], indent: string, style: Style = {}): void {
    let total = 0;
    for (const line of lines) {
      total += line.length;
      if (total > MAX_BLOCK_CHARS) {
        this.push([{ text: indent }, { text: '… (rest not shown)', dim: true }]);
        return;
      }
      const lead = /^ */.exec(line)![0];
      const rows = wrap(sanitize(line.slice(lead.length)), Math.max(8, this.width - indent.length - lead.length));
      for (const row of rows) this.push([{ text: indent + lead }, { text: row, ...style }]);
    }
  }
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Bytes of a text decoded to show it: a screen shows MAX_BLOCK_CHARS of it at most, and it may be longer than a string can be. */
const SHOWN_BYTES = 8 * MAX_BLOCK_CHARS;

function contentText(b: Buffer, span: Span): { text: string; leftOut: number } {
  return shownStringAt(b, span, SHOWN_BYTES) ?? { text: b.toString('utf8', span[0], Math.min(span[1], span[0] + SHOWN_BYTES)), leftOut: Math.max(0, span[1] - span[0] - SHOWN_BYTES) };
}

function renderParts(out: RowBuilder, b: Buffer, span: Span, indent: string): void {
  for (const part of elementsOf(b, span)) {
    const members = membersOf(b, part);
    const type = stringAt(b, members.get('type') ?? null);
    const text = members.get('text');
    const shown = type === 'text' && text !== undefined ? shownStringAt(b, text, SHOWN_BYTES) : null;
    if (shown !== null) {
      out.text(shown.text, indent, {}, shown.leftOut);
      continue;
    }
    const image = members.get('image_url');
    if (image !== undefined) {
      const urlSpan = b[image[0]] === 0x7b ? membersOf(b, image).get('url') : image;
      const url = urlSpan !== undefined ? b.toString('utf8', urlSpan[0] + 1, Math.min(urlSpan[1] - 1, urlSpan[0] + 1 + 200)) : '';
      const label = url.startsWith('data:')
        ? `${url.slice(0, Math.max(0, url.indexOf(',')))} (${formatBytes(urlSpan![1] - urlSpan![0])})`
        : url;
      out.push([{ text: indent }, { text: `[image] ${sanitize(label, true)}`, color: 'blue' }]);
      continue;
    }
    out.json(prettyJson(b, part), indent);
  }
}

function renderContent(out: RowBuilder, b: Buffer, m: MessageSpans, structured: boolean): void {
  const span = m.content;
  if (span === null) return;
  const c = b[span[0]];
  if (c === 0x22) {
    const { text, leftOut } = shownStringAt(b, span, SHOWN_BYTES)!;
    if (text === '') return;
    if ((structured || m.role === 'assistant' || m.role === 'tool') && leftOut === 0) {
      const pretty = prettyJsonText(text);
      if (pretty !== null) {
        out.json(pretty, '  ', { color: structured ? 'greenBright' : undefined });
        return;
      }
    }
    out.text(text, '  ', {}, leftOut);
  } else if (c === 0x5b) {
    renderParts(out, b, span, '  ');
  } else {
    out.json(prettyJson(b, span), '  ');
  }
}

/** Draws an assistant turn's tool calls; notes each call's tool under its id, for the results below. */
function renderToolCalls(out: RowBuilder, b: Buffer, span: Span, toolOfCall: Map<string, string>): void {
  for (const call of elementsOf(b, span)) {
    const members = membersOf(b, call);
    const fn = members.get('function');
    const fnMembers = fn !== undefined ? membersOf(b, fn) : new Map<string, Span>();
    const name = stringAt(b, fnMembers.get('name') ?? null) ?? '?';
    const id = stringAt(b, members.get('id') ?? null);
    if (id !== null && name !== '?') toolOfCall.set(id, name);
    out.push([
      { text: '  ' },
      { text: `⚙ ${sanitize(name, true)}`, color: 'yellow', bold: true },
      { text: id !== null ? `  ${sanitize(id, true)}` : '', dim: true },
    ]);
    const args = fnMembers.get('arguments');
    if (args === undefined) continue;
    const shown = shownStringAt(b, args, SHOWN_BYTES);
    if (shown !== null) {
      const pretty = shown.leftOut === 0 ? prettyJsonText(shown.text) : null;
      if (pretty !== null) out.json(pretty, '    ');
      else out.text(shown.text, '    ', {}, shown.leftOut);
    } else {
      out.json(prettyJson(b, args), '    ');
    }
  }
}

/**
 * Whether a record's usage and cost are left over from an earlier call. Only Synalinks
 * no_output records carry such values (synalinks-format.md); Ask and klieo record each
 * call's own accounting, whatever its status.
 */
export function staleAccounting(source: SourceKind, status: string): boolean {
  return source === 'synalinks' && status === 'no_output';
}

export interface ChatOptions {
  width: number;
  /** The recorder that wrote the record (default: synalinks). */
  source?: SourceKind;
  /** Whether a fold (`system:<n>`, `reasoning:<n>`) is open. */
  isOpen: (fold: string) => boolean;
}

/** The conversation of a record as rows. */
export function chatRows(record: SynalinksRecord, options: ChatOptions): Row[] {
  const out = new RowBuilder(Math.max(20, options.width));
  const b = record.raw;
  const messages = scanMessages(b, record.span('messages')!);
  const status = record.status;
  const outputs = record.span('outputs');
  // A structured call's outputs is the parsed object itself, not an assistant message.
  const structured = status === 'ok' && outputs !== null && b[outputs[0]] === 0x7b && !membersOf(b, outputs).has('role');
  const toolOfCall = new Map<string, string>();
  messages.forEach((m, k) => {
    const isCompletion = status === 'ok' && k === messages.length - 1;
    const role = m.role || '?';
    // A recorded role is any text: fitSegs keeps its control characters off the terminal.
    const header: Seg[] = [{ text: `▍${role}`, color: Object.hasOwn(ROLE_COLORS, role) ? ROLE_COLORS[role] : 'white', bold: true }];
    if (isCompletion) header.push({ text: structured ? '  completion (structured)' : '  completion', color: 'green' });
    if (m.name !== null && role !== 'tool') header.push({ text: `  ${sanitize(m.name, true)}`, dim: true });
    if (role === 'tool') {
      // Recorders often leave the result's name out: the call it answers names the tool.
      const tool = m.name ?? (m.toolCallId !== null ? toolOfCall.get(m.toolCallId) : undefined);
      header.push({ text: tool !== undefined ? `  result of ${sanitize(tool, true)}` : '  tool result', color: 'yellow' });
      if (m.toolCallId !== null) header.push({ text: `  for ${sanitize(m.toolCallId, true)}`, dim: true });
    }
    header.push({ text: `  #${k + 1}`, dim: true });
    out.push(header);
    if ((role === 'system' || role === 'developer') && m.content !== null) {
      const fold = `system:${k}`;
      const { text, leftOut } = contentText(b, m.content);
      if (!options.isOpen(fold)) {
        const size = leftOut > 0 ? `${formatBytes(m.content[1] - m.content[0])}` : `${plural(lineCount(text), 'line')}, ${plural(text.length, 'char')}`;
        out.push([{ text: '  ' }, { text: `▸ ${role} prompt folded (${size}): Enter unfolds`, dim: true }], fold);
      } else {
        out.push([{ text: '  ' }, { text: `▾ ${role} prompt`, dim: true }], fold);
        out.inFold = fold;
        renderContent(out, b, m, false);
        out.inFold = undefined;
      }
    } else {
      if (m.reasoning !== null) {
        const fold = `reasoning:${k}`;
        const { text, leftOut } = contentText(b, m.reasoning);
        if (!options.isOpen(fold)) {
          const size = leftOut > 0 ? formatBytes(m.reasoning[1] - m.reasoning[0]) : plural(lineCount(text), 'line');
          out.push([{ text: '  ' }, { text: `▸ reasoning folded (${size}): Enter unfolds`, dim: true, italic: true }], fold);
        } else {
          out.push([{ text: '  ' }, { text: '▾ reasoning', dim: true, italic: true }], fold);
          out.inFold = fold;
          out.text(text, '  │ ', { dim: true, italic: true }, leftOut);
          out.inFold = undefined;
        }
      }
      renderContent(out, b, m, isCompletion && structured);
      if (m.toolCalls !== null) renderToolCalls(out, b, m.toolCalls, toolOfCall);
    }
    out.blank();
  });
  if (status === 'exception') {
    out.push([{ text: '✗ exception', color: 'red', bold: true }]);
    out.text(record.exception ?? '', '  ', { color: 'red' });
  } else if (status === 'no_output') {
    out.push([{ text: '∅ no output', color: 'yellow', bold: true }]);
    const why = staleAccounting(options.source ?? 'synalinks', status)
      ? 'The call returned nothing (streamed call, provider failure after all retries, or empty input). Its usage and cost are stale.'
      : 'The recorder kept no output for this call.';
    out.text(why, '  ', { color: 'yellow' });
  }
  return out.rows;
}

/** The folds of a record whose hidden rows match `regex`: what a search must unfold to show its matches. */
export function foldsMatching(record: SynalinksRecord, options: Omit<ChatOptions, 'isOpen'>, regex: RegExp): Set<string> {
  const folds = new Set<string>();
  for (const row of chatRows(record, { ...options, isOpen: () => true })) {
    if (row.inFold === undefined || folds.has(row.inFold)) continue;
    regex.lastIndex = 0;
    if (regex.test(rowText(row))) folds.add(row.inFold);
  }
  return folds;
}

/** A damaged line: where it is, why it could not be read, and its start. */
export function damagedRows(info: EntryInfo, raw: Buffer, width: number): Row[] {
  const out = new RowBuilder(Math.max(20, width));
  out.push([{ text: '⚠ damaged line', color: 'magenta', bold: true }]);
  out.push([{ text: '  file  ', dim: true }, { text: `${info.file.display}:${info.line}` }]);
  out.push([{ text: '  bytes ', dim: true }, { text: `${info.length} at offset ${info.offset}` }]);
  out.text(info.damagedReason ?? '', '  ', { color: 'magenta' });
  out.blank();
  out.text(raw.toString('utf8', 0, Math.min(raw.length, 4096)) + (raw.length > 4096 ? ' …' : ''), '  ', { dim: true });
  return out.rows;
}

/** The cost as recorded, else as estimated from the price table (`≈`), else why there is none. */
function costText(recorded: number | null, info: EntryInfo, stale: boolean): string {
  if (stale) return 'not counted (stale for records without output)';
  if (recorded !== null) return `${formatUsd(recorded)}  (${recorded})`;
  if (info.costEstimated && Number.isFinite(info.cost)) return `${formatUsd(info.cost, true)}  (estimated from the price table: the recorder kept none)`;
  return 'null';
}

/** The record's metadata as label/value rows. */
export function metaRows(record: SynalinksRecord | null, info: EntryInfo, extra: { groupSize: number; marked: boolean }, width: number): Row[] {
  const out = new RowBuilder(Math.max(30, width));
  const labelWidth = 16;
  const field = (label: string, value: string, style: Style = {}): void => {
    const rows = wrap(sanitize(value), out.width - labelWidth);
    rows.forEach((row, k) => out.push([{ text: (k === 0 ? label : '').padEnd(labelWidth), dim: true }, { text: row, ...style }]));
  };
  if (info.otherRecorder) {
    field('file', `${info.file.display} (record ${info.line}; ${info.file.source ?? 'other'} file, read whole)`);
  } else {
    field('file', `${info.file.display}:${info.line}`);
    field('byte offset', `${info.offset} (${formatBytes(info.length)})`);
  }
  field('program', info.module.program);
  field('module', info.module.module);
  field('status', info.status, { color: STATUS_COLOR[info.status], bold: true });
  if (extra.marked) field('marked', 'yes: excluded when the list is written (w)', { color: 'red' });
  if (record === null) {
    if (info.damagedReason !== null) field('damage', info.damagedReason, { color: 'magenta' });
    return out.rows;
  }
  field('call_id', record.callId);
  field('parent_call_id', record.parentCallId ?? 'null');
  field('timestamp', Number.isFinite(info.timestamp) ? `${formatLongTime(info.timestamp)} UTC  (${info.timestamp})` : 'null');
  field('duration', Number.isFinite(info.duration) ? `${formatDuration(info.duration)}  (${info.duration} s)` : 'null');
  field('model', record.model ?? '(unknown)');
  const stale = staleAccounting(info.file.source, info.status);
  field('cost', costText(record.cost, info, stale));
  // The recorder's version, for a source whose records carry one (Synalinks' `synalinks_version`).
  const versionName = versionNameOf(info.file.source);
  if (versionName !== null) field(versionName, record.version ?? '');
  field('messages', String(record.messageCount()));
  field('inputs_hash', record.inputsHash);
  field('config_hash', record.configHash);
  field('dedupe key', keyHex(keyOf(record, DEFAULT_KEY)));
  field(
    'duplicates',
    extra.groupSize <= 1 ? 'none' : `${extra.groupSize} records share these keys${info.duplicate ? '; a dedupe drops this one' : ''} (D shows them)`,
  );
  const b = record.raw;
  const usage = record.span('usage');
  out.blank();
  out.push([{ text: 'usage', bold: true }, { text: stale ? '  (stale: left over from an earlier call)' : '', dim: true }]);
  if (usage !== null) out.json(prettyJson(b, usage), '  ');
  const config = record.span('config');
  if (config !== null) {
    out.blank();
    out.push([{ text: 'config', bold: true }]);
    const inner = membersOf(b, config).get('config');
    out.json(prettyJson(b, inner ?? config), '  ');
  }
  return out.rows;
}

export const STATUS_COLOR: Record<string, string> = {
  ok: 'green',
  exception: 'red',
  no_output: 'yellow',
  damaged: 'magenta',
};

export const STATUS_GLYPH: Record<string, string> = {
  ok: '✓',
  exception: '✗',
  no_output: '∅',
  damaged: '⚠',
};

/** Splits a row's segments so the parts matching `regex` are shown inverted. */
export function highlight(row: Row, regex: RegExp): Row {
  const text = rowText(row);
  const flags = regex.flags.includes('g') ? regex.flags : `${regex.flags}g`;
  const global = new RegExp(regex.source, flags);
  const ranges: [number, number][] = [];
  for (let m = global.exec(text); m !== null; m = global.exec(text)) {
    if (m[0].length === 0) {
      global.lastIndex++;
      continue;
    }
    ranges.push([m.index, m.index + m[0].length]);
  }
  if (ranges.length === 0) return row;
  const segs: Seg[] = [];
  let pos = 0;
  for (const seg of row.segs) {
    const start = pos;
    const end = pos + seg.text.length;
    let cursor = start;
    for (const [a, b] of ranges) {
      if (b <= cursor || a >= end) continue;
      const from = Math.max(a, cursor);
      const to = Math.min(b, end);
      if (from > cursor) segs.push({ ...seg, text: seg.text.slice(cursor - start, from - start) });
      segs.push({ ...seg, text: seg.text.slice(from - start, to - start), inverse: true, color: 'yellow' });
      cursor = to;
    }
    if (cursor < end) segs.push({ ...seg, text: seg.text.slice(cursor - start) });
    pos = end;
  }
  return { ...row, segs };
}
