/**
 * `contaminated`: a record whose user text shares a word 8-gram with an evaluation item, as
 * open-r1's `scripts/decontaminate.py` decides it: text lower-cased, stripped and split on
 * white space, n-grams of consecutive words. An item of fewer words than that has no n-gram
 * and so can match nothing (as there); the report counts such items.
 *
 * The evaluation sets are read once, in this thread, into an index in shared memory: the
 * worker threads that read the records look n-grams up in it without a copy.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../../errors.js';
import { contentText } from './text.js';
import type { Message } from '../../record.js';

/** Words per n-gram (open-r1's `--ngram_size` default). */
export const NGRAM_WORDS = 8;
/** JSONL fields (and CSV columns) read as the item when `--decontaminate-field` names none, in this order. */
export const DEFAULT_FIELDS = ['question', 'prompt', 'problem', 'instruction', 'input', 'query', 'text'] as const;

/** The index of every evaluation item's n-grams: plain values and shared buffers, so it crosses to workers as it is. */
export interface EvalIndex {
  files: string[];
  /** Open addressing, two words a slot (the n-gram's 64-bit hash; 0,0 is empty). */
  slots: Uint32Array;
  /** Per slot, the item holding the n-gram first. */
  slotItems: Uint32Array;
  itemFile: Uint16Array;
  /** 1-based line (JSONL, text), row (CSV) or element (a .json array) of the item in its file. */
  itemLine: Uint32Array;
  /** Item i's normalized text is `text[itemStarts[i] .. itemStarts[i + 1]]` (UTF-8). */
  itemStarts: Uint32Array;
  text: Uint8Array;
  /** Per file: items read, and those too short to hold an n-gram. */
  items: number[];
  shortItems: number[];
}

export interface EvalMatch {
  file: number;
  line: number;
  /** The record's 8 words, as written (white space made one space). */
  ngram: string;
}

/** open-r1's `normalize_string` then `split()`: the words of the lower-cased text. */
export function normalizedWords(text: string): string[] {
  const words = text.toLowerCase().split(/\s+/);
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}

function wordHash(word: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Two 32-bit hashes of each word, for the n-gram hashes. */
function wordHashes(words: readonly string[]): Uint32Array {
  const hashes = new Uint32Array(words.length * 2);
  for (let i = 0; i < words.length; i++) {
    hashes[i * 2] = wordHash(words[i], 0x811c9dc5);
    hashes[i * 2 + 1] = wordHash(words[i], 0x2c1b3c6d);
  }
  return hashes;
}

/** The 64-bit hash of the n-gram starting at word `at`, into `out`; the second word is never 0 (0,0 marks an empty slot). */
function ngramHash(hashes: Uint32Array, at: number, out: Uint32Array): void {
  let a = 0x9e3779b9;
  let b = 0x85ebca6b;
  for (let i = at; i < at + NGRAM_WORDS; i++) {
    a = Math.imul(a ^ hashes[i * 2], 0x5bd1e995);
    a ^= a >>> 15;
    b = Math.imul(b ^ hashes[i * 2 + 1], 0xc2b2ae35);
    b ^= b >>> 13;
  }
  out[0] = a >>> 0;
  out[1] = (b | 1) >>> 0;
}

function shared<T extends Uint32Array | Uint16Array | Uint8Array>(Kind: { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, length: number): T {
  return new Kind(new SharedArrayBuffer(Math.max(1, length) * Kind.BYTES_PER_ELEMENT));
}

/** One CSV document (RFC 4180: quoted fields, doubled quotes, new lines in quotes) as rows of fields. */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The first user message of a chat-shaped item (`messages`), as text. */
function firstUserText(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  for (const m of value) {
    if (m !== null && typeof m === 'object' && (m as Message).role === 'user') return contentText(m as Message);
  }
  return null;
}

function itemOfJson(value: unknown, field: string | null): string | null {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const object = value as Record<string, unknown>;
  if (field !== null) {
    const text = object[field];
    return typeof text === 'string' ? text : field === 'messages' ? firstUserText(text) : null;
  }
  const user = firstUserText(object.messages);
  if (user !== null) return user;
  // The first that holds text: Alpaca-style sets leave `input` empty beside their `instruction`.
  for (const name of DEFAULT_FIELDS) if (typeof object[name] === 'string' && (object[name] as string).trim() !== '') return object[name] as string;
  return null;
}

/** The items of one evaluation file, each with its line (JSONL, text) or row (CSV) number. */
export function readEvalItems(file: string, field: string | null): { line: number; text: string }[] {
  let data: string;
  try {
    data = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(`--decontaminate ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (data.charCodeAt(0) === 0xfeff) data = data.slice(1);
  const extension = path.extname(file).toLowerCase();
  const items: { line: number; text: string }[] = [];
  if (extension === '.csv') {
    const rows = csvRows(data);
    const header = (rows[0] ?? []).map((name) => name.trim());
    const wanted = field !== null ? [field] : DEFAULT_FIELDS;
    const column = header.findIndex((name) => wanted.some((w) => w.toLowerCase() === name.toLowerCase()));
    if (column === -1) {
      throw new UserError(
        `--decontaminate ${file}: no column ${wanted.map((w) => JSON.stringify(w)).join(' or ')} in its header (${header.map((h) => JSON.stringify(h)).join(', ')}): name the column with --decontaminate-field`,
      );
    }
    rows.slice(1).forEach((row, i) => {
      const text = row[column];
      if (text !== undefined && text.trim() !== '') items.push({ line: i + 2, text });
    });
    return items;
  }
  const json = extension === '.jsonl' || extension === '.json' || extension === '.ndjson';
  // A .json file may be one array of items rather than one item a line.
  if (extension === '.json' && data.trimStart().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(data);
    } catch {
      list = null;
    }
    if (Array.isArray(list)) {
      list.forEach((value, i) => {
        const text = itemOfJson(value, field);
        if (text !== null) items.push({ line: i + 1, text });
      });
      return items;
    }
  }
  const lines = data.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    if (!json) {
      items.push({ line: i + 1, text: line });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UserError(`--decontaminate ${file} line ${i + 1}: not a JSON value (JSONL holds one per line): fix or remove the line, or give the items as plain text, one per line, in a .txt file`);
    }
    const text = itemOfJson(value, field);
    if (text !== null) items.push({ line: i + 1, text });
  });
  return items;
}

/** Reads the evaluation files into one index. `display` names each file as the report shows it. */
export function buildEvalIndex(files: readonly string[], field: string | null, display: (file: string) => string = (f) => f): EvalIndex {
  const perFile = files.map((file) => readEvalItems(file, field));
  const total = perFile.reduce((n, items) => n + items.length, 0);
  const encoder = new TextEncoder();
  const normalized: Uint8Array[] = [];
  const grams: { hash: Uint32Array; item: number }[] = [];
  const itemFile = shared(Uint16Array, total);
  const itemLine = shared(Uint32Array, total);
  const items: number[] = [];
  const shortItems: number[] = [];
  let item = 0;
  const hash = new Uint32Array(2);
  perFile.forEach((list, fileIndex) => {
    items.push(list.length);
    let short = 0;
    for (const { line, text } of list) {
      const words = normalizedWords(text);
      normalized.push(encoder.encode(words.join(' ')));
      itemFile[item] = fileIndex;
      itemLine[item] = line;
      if (words.length < NGRAM_WORDS) short++;
      const hashes = wordHashes(words);
      for (let at = 0; at + NGRAM_WORDS <= words.length; at++) {
        ngramHash(hashes, at, hash);
        grams.push({ hash: hash.slice(), item });
      }
      item++;
    }
    shortItems.push(short);
    // A file that can match no record would decontaminate nothing, silently: a wrong field, or items too short for an n-gram.
    const shown = display(files[fileIndex]);
    if (list.length === 0) {
      throw new UserError(
        `--decontaminate ${shown}: no evaluation item read (${field !== null ? `no item holds the field ${JSON.stringify(field)}` : `no line is a string, a chat's messages or one of the fields ${DEFAULT_FIELDS.join(', ')}`}), so it can match no record: name the field that holds the question with --decontaminate-field`,
      );
    }
    if (short === list.length) {
      throw new UserError(
        `--decontaminate ${shown}: ${list.length === 1 ? 'its one item is' : `each of its ${list.length} items is`} under ${NGRAM_WORDS} words, and a record matches an item by a shared ${NGRAM_WORDS}-word run, so it can match no record: name the field that holds the whole question with --decontaminate-field`,
      );
    }
  });
  let capacity = 16;
  while (capacity < grams.length * 2) capacity *= 2;
  const slots = shared(Uint32Array, capacity * 2);
  const slotItems = shared(Uint32Array, capacity);
  const mask = capacity - 1;
  for (const { hash: h, item: owner } of grams) {
    for (let slot = h[0] & mask; ; slot = (slot + 1) & mask) {
      if (slots[slot * 2 + 1] === 0) {
        slots[slot * 2] = h[0];
        slots[slot * 2 + 1] = h[1];
        slotItems[slot] = owner;
        break;
      }
      if (slots[slot * 2] === h[0] && slots[slot * 2 + 1] === h[1]) break;
    }
  }
  const itemStarts = shared(Uint32Array, total + 1);
  let bytes = 0;
  normalized.forEach((text, i) => {
    itemStarts[i] = bytes;
    bytes += text.length + 1;
  });
  itemStarts[total] = bytes;
  const text = shared(Uint8Array, bytes);
  normalized.forEach((t, i) => text.set(t, itemStarts[i]));
  return { files: files.map(display), slots, slotItems, itemFile, itemLine, itemStarts, text, items, shortItems };
}

function itemText(index: EvalIndex, item: number): string {
  const start = index.itemStarts[item];
  // Each text is followed by one unused byte (see buildEvalIndex).
  const end = index.itemStarts[item + 1] - 1;
  return Buffer.from(index.text.buffer, index.text.byteOffset + start, end - start).toString('utf8');
}

/** The first n-gram of `text` an evaluation item holds too, or null. */
export function contaminationIn(text: string, index: EvalIndex): EvalMatch | null {
  // The words as written, for the detail: a secret keeps the case its detector knows it by.
  const written = text.trim().split(/\s+/);
  const words = written.map((word) => word.toLowerCase());
  if (words.length < NGRAM_WORDS) return null;
  const hashes = wordHashes(words);
  const hash = new Uint32Array(2);
  const mask = index.slotItems.length - 1;
  for (let at = 0; at + NGRAM_WORDS <= words.length; at++) {
    ngramHash(hashes, at, hash);
    for (let slot = hash[0] & mask; index.slots[slot * 2 + 1] !== 0; slot = (slot + 1) & mask) {
      if (index.slots[slot * 2] !== hash[0] || index.slots[slot * 2 + 1] !== hash[1]) continue;
      const item = index.slotItems[slot];
      const ngram = words.slice(at, at + NGRAM_WORDS).join(' ');
      // A hash is no proof: the item's text must hold the very words.
      if (` ${itemText(index, item)} `.includes(` ${ngram} `)) {
        return { file: index.itemFile[item], line: index.itemLine[item], ngram: written.slice(at, at + NGRAM_WORDS).join(' ') };
      }
      break;
    }
  }
  return null;
}
