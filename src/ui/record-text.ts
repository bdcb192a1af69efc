/**
 * Reads what the browser shows straight from a record's bytes: the messages as spans,
 * the list preview, the text a search matches, and pretty JSON that keeps every number's
 * source text (`153126.0` stays `153126.0`, where JSON.parse would print `153126`).
 */
import { decodeString, forEachElement, forEachMember, skipValue } from '../canonical/scan.js';

export type Span = [number, number];

export interface MessageSpans {
  role: string;
  content: Span | null;
  reasoning: Span | null;
  toolCalls: Span | null;
  toolCallId: string | null;
  name: string | null;
}

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** Raised inside a scanner callback to stop early. */
class Stop extends Error {}

function keyText(b: Buffer, start: number, end: number): string {
  return decodeString(b, start, end);
}

export function isString(b: Buffer, span: Span | null): boolean {
  return span !== null && b[span[0]] === QUOTE;
}

export function isNull(b: Buffer, span: Span | null): boolean {
  return span === null || (span[1] - span[0] === 4 && b.toString('latin1', span[0], span[1]) === 'null');
}

/** The text of a string token, or null when the span is not a string. */
export function stringAt(b: Buffer, span: Span | null): string | null {
  if (span === null || b[span[0]] !== QUOTE) return null;
  return decodeString(b, span[0], span[1]);
}

function messageSpans(b: Buffer, start: number, end: number): MessageSpans {
  const m: MessageSpans = { role: '', content: null, reasoning: null, toolCalls: null, toolCallId: null, name: null };
  if (b[start] !== OPEN_BRACE) return m;
  forEachMember(b, start, end, (ks, ke, vs, ve) => {
    switch (keyText(b, ks, ke)) {
      case 'role':
        m.role = stringAt(b, [vs, ve]) ?? '';
        break;
      case 'content':
        if (!isNull(b, [vs, ve])) m.content = [vs, ve];
        break;
      case 'reasoning_content':
        if (!isNull(b, [vs, ve])) m.reasoning = [vs, ve];
        break;
      case 'tool_calls':
        if (!isNull(b, [vs, ve])) m.toolCalls = [vs, ve];
        break;
      case 'tool_call_id':
        m.toolCallId = stringAt(b, [vs, ve]);
        break;
      case 'name':
        m.name = stringAt(b, [vs, ve]);
        break;
    }
  });
  return m;
}

/** Every message of a messages array, as spans into `b`. */
export function scanMessages(b: Buffer, span: Span): MessageSpans[] {
  const out: MessageSpans[] = [];
  if (b[span[0]] !== OPEN_BRACKET) return out;
  forEachElement(b, span[0], span[1], (vs, ve) => out.push(messageSpans(b, vs, ve)));
  return out;
}

/** Spans of the members of the object at `span`, by key. */
export function membersOf(b: Buffer, span: Span): Map<string, Span> {
  const members = new Map<string, Span>();
  if (b[span[0]] !== OPEN_BRACE) return members;
  forEachMember(b, span[0], span[1], (ks, ke, vs, ve) => members.set(keyText(b, ks, ke), [vs, ve]));
  return members;
}

export function elementsOf(b: Buffer, span: Span): Span[] {
  const out: Span[] = [];
  if (b[span[0]] !== OPEN_BRACKET) return out;
  forEachElement(b, span[0], span[1], (vs, ve) => out.push([vs, ve]));
  return out;
}

const PREVIEW_BYTES = 600;

/** Decodes the start of a string token cheaply, even when the token is megabytes long. */
function stringPrefix(b: Buffer, span: Span, maxBytes: number): string {
  if (span[1] - span[0] <= maxBytes) return decodeString(b, span[0], span[1]);
  const raw = b.toString('utf8', span[0] + 1, span[0] + 1 + maxBytes);
  return raw.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    switch (e[0]) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'b':
      case 'f':
        return ' ';
      case 'u':
        return String.fromCharCode(parseInt(e.slice(1), 16));
      default:
        return e;
    }
  });
}

/** The first text of a content value: a string, the first text part of a list, or a dict's JSON. */
function contentPrefix(b: Buffer, span: Span, maxBytes: number): string {
  const c = b[span[0]];
  if (c === QUOTE) return stringPrefix(b, span, maxBytes);
  if (c === OPEN_BRACKET) {
    let text = '';
    try {
      forEachElement(b, span[0], span[1], (vs, ve) => {
        const part = membersOf(b, [vs, ve]);
        const t = part.get('text');
        if (t !== undefined && b[t[0]] === QUOTE) {
          text = stringPrefix(b, t, maxBytes);
          throw new Stop();
        }
      });
    } catch (error) {
      if (!(error instanceof Stop)) throw error;
    }
    return text;
  }
  return b.toString('utf8', span[0], Math.min(span[1], span[0] + maxBytes));
}

/** The start of the first user message (else of the first message with content), for the list. */
export function previewOf(b: Buffer, messages: Span): string {
  let fallback = '';
  let found = '';
  try {
    forEachElement(b, messages[0], messages[1], (vs, ve) => {
      const m = messageSpans(b, vs, ve);
      if (m.content === null) return;
      if (m.role === 'user') {
        found = contentPrefix(b, m.content, PREVIEW_BYTES);
        throw new Stop();
      }
      if (fallback === '' && m.role !== 'system' && m.role !== 'developer') fallback = contentPrefix(b, m.content, PREVIEW_BYTES);
    });
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  return tidyPreview(found || fallback);
}

/**
 * Synalinks wraps a program's input as `<input>\n{'query': '…'}\n</input>`: the list shows
 * what is inside (the first value of a one-line dict), which is what tells calls apart.
 */
export function tidyPreview(text: string): string {
  let t = text.replace(/\s+/g, ' ').trim();
  const input = /^<input>\s*(.*?)\s*(<\/input>.*)?$/.exec(t);
  if (input !== null) t = input[1];
  const dict = /^\{\s*['"][^'"]{1,40}['"]\s*:\s*['"]?(.*)$/.exec(t);
  if (dict !== null) t = dict[1].replace(/['"]?\s*\}$/, '');
  return t;
}

/**
 * Texts longer than this are searched by their start only: a message may hold more than a
 * JavaScript string can (about 536 MB), and a search over hundreds of megabytes would stall
 * the screen anyway.
 */
const SEARCHED_BYTES = 1 << 24;

/** The text of the value at `span` to search: a string's text, or other JSON as written; its start when long. */
function searchedText(b: Buffer, span: Span): string {
  if (b[span[0]] === QUOTE) return stringPrefix(b, span, SEARCHED_BYTES);
  return b.toString('utf8', span[0], Math.min(span[1], span[0] + SEARCHED_BYTES));
}

/**
 * The text a search runs over: every message's content (text parts only, not image data),
 * reasoning, tool calls and their results, and the exception.
 */
export function searchTextOf(b: Buffer, messages: Span, exception: string | null): string {
  const parts: string[] = [];
  let length = 0;
  const add = (text: string): void => {
    // Joined, the parts must still make one string.
    if (length + text.length > 16 * SEARCHED_BYTES) return;
    parts.push(text);
    length += text.length + 1;
  };
  for (const m of scanMessages(b, messages)) {
    if (m.content !== null) {
      if (b[m.content[0]] === OPEN_BRACKET) {
        for (const part of elementsOf(b, m.content)) {
          const t = membersOf(b, part).get('text');
          if (t !== undefined && b[t[0]] === QUOTE) add(searchedText(b, t));
        }
      } else add(searchedText(b, m.content));
    }
    if (m.reasoning !== null && b[m.reasoning[0]] === QUOTE) add(searchedText(b, m.reasoning));
    if (m.toolCalls !== null) add(searchedText(b, m.toolCalls));
    if (m.name !== null) add(m.name);
  }
  if (exception !== null) add(exception);
  return parts.join('\n');
}

/**
 * A string token's text to show, or null when the span is not a string: a text longer than
 * `maxBytes` is decoded only that far (a screen shows a fraction of it, and it may be longer
 * than a string can be), and `leftOut` counts the bytes not decoded.
 */
export function shownStringAt(b: Buffer, span: Span | null, maxBytes: number): { text: string; leftOut: number } | null {
  if (span === null || b[span[0]] !== QUOTE) return null;
  return { text: stringPrefix(b, span, maxBytes), leftOut: Math.max(0, span[1] - span[0] - maxBytes) };
}

const MAX_STRING_TOKEN = 4000;

/** A string token as JSON text, shortened when huge (data URLs, base64 blobs). */
function tokenText(b: Buffer, start: number, end: number): string {
  const length = end - start;
  if (b[start] === QUOTE && b.toString('latin1', start + 1, start + 6) === 'data:') {
    const head = b.toString('utf8', start, Math.min(end, start + 48));
    const comma = head.indexOf(',');
    return `${comma > 0 ? head.slice(0, comma + 1) : head}…" (${Math.round(length / 1024)} KB data URL)`;
  }
  if (b[start] === QUOTE && length > MAX_STRING_TOKEN) {
    return `${b.toString('utf8', start, start + MAX_STRING_TOKEN)}…" (+${Math.round((length - MAX_STRING_TOKEN) / 1024)} KB)`;
  }
  return b.toString('utf8', start, end);
}

function prettyInto(b: Buffer, start: number, end: number, depth: number, prefix: string, suffix: string, out: string[]): void {
  const pad = '  '.repeat(depth);
  const c = b[start];
  if (c === OPEN_BRACE) {
    const members: [number, number, number, number][] = [];
    forEachMember(b, start, end, (ks, ke, vs, ve) => members.push([ks, ke, vs, ve]));
    if (members.length === 0) {
      out.push(`${pad}${prefix}{}${suffix}`);
      return;
    }
    out.push(`${pad}${prefix}{`);
    members.forEach(([ks, ke, vs, ve], i) => {
      prettyInto(b, vs, ve, depth + 1, `${b.toString('utf8', ks, ke)}: `, i < members.length - 1 ? ',' : '', out);
    });
    out.push(`${pad}}${suffix}`);
  } else if (c === OPEN_BRACKET) {
    const elements = elementsOf(b, [start, end]);
    if (elements.length === 0) {
      out.push(`${pad}${prefix}[]${suffix}`);
      return;
    }
    out.push(`${pad}${prefix}[`);
    elements.forEach(([vs, ve], i) => prettyInto(b, vs, ve, depth + 1, '', i < elements.length - 1 ? ',' : '', out));
    out.push(`${pad}]${suffix}`);
  } else {
    out.push(`${pad}${prefix}${tokenText(b, start, end)}${suffix}`);
  }
}

/** Pretty JSON of the value at `span`, two-space indented, numbers as written. */
export function prettyJson(b: Buffer, span: Span): string[] {
  const out: string[] = [];
  prettyInto(b, span[0], span[1], 0, '', '', out);
  return out;
}

/** Pretty JSON of JSON text; null when the text is not a JSON object or array. */
export function prettyJsonText(text: string): string[] | null {
  const t = text.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return null;
  const b = Buffer.from(t, 'utf8');
  try {
    if (skipValue(b, 0, b.length) !== b.length) return null;
    return prettyJson(b, [0, b.length]);
  } catch {
    return null;
  }
}
