/**
 * The pre-tokenizer of the o200k_base and cl100k_base encodings: where the text splits into
 * the pieces that byte-pair encoding then works on, one piece at a time.
 *
 * gpt-tokenizer finds the pieces with the encodings' Unicode regexes, and that regex and the
 * string it allocates per piece cost more than the byte-pair merges themselves. Here text is
 * split by hand, following the regex alternative by alternative over each character's general
 * category; when a decision would look at half of an astral character (an emoji), the regex
 * itself decides that one piece (sticky, from the same position), so the pieces are the
 * regex's own on any text. The test suite checks that against the regex on random and real text.
 */

export type PieceGrammar = 'o200k' | 'cl100k';

// What the regexes ask of a character (JS `\s`, Unicode general categories), as bits.
const KNOWN = 1;
/** o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
const CAPITAL = 2;
/** o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]: modifier and other letters (CJK) and marks are both. */
const SMALL = 4;
/** \p{L}: cl100k's letters (marks are not). */
const LETTER = 8;
/** [^\r\n\p{L}\p{N}]: the optional first character of a word piece. */
const PREFIX = 16;
/** [^\s\p{L}\p{N}] */
const SYMBOL = 32;
/**
 * \s as the reference tokenizer (tiktoken, a Rust regex) reads it: Unicode White_Space, which
 * holds U+0085 and not U+FEFF. JavaScript's \s is another set (U+FEFF in, U+0085 out).
 */
const WHITESPACE = 64;
const NEWLINE = 128;
/** \p{N} */
const DIGIT = 256;
/** Half of an astral character (emoji): not decided here. */
const SURROGATE = 512;
/** Past the end of the text. */
const END = KNOWN;

/** Each UTF-16 code unit's bits, found with the regex engine the first time it is seen (0: not yet). */
const FLAGS = new Uint16Array(0x10000);

function flagsOf(c: number): number {
  if (c >= 0xd800 && c <= 0xdfff) return KNOWN | SURROGATE;
  const ch = String.fromCharCode(c);
  const letter = /\p{L}/u.test(ch);
  const digit = /\p{N}/u.test(ch);
  const space = /\p{White_Space}/u.test(ch);
  const newline = ch === '\r' || ch === '\n';
  const mark = /\p{M}/u.test(ch);
  const both = mark || /[\p{Lm}\p{Lo}]/u.test(ch);
  return (
    KNOWN |
    (both || /[\p{Lu}\p{Lt}]/u.test(ch) ? CAPITAL : 0) |
    (both || /\p{Ll}/u.test(ch) ? SMALL : 0) |
    (letter ? LETTER : 0) |
    (!newline && !letter && !digit ? PREFIX : 0) |
    (!space && !letter && !digit ? SYMBOL : 0) |
    (space ? WHITESPACE : 0) |
    (newline ? NEWLINE : 0) |
    (digit ? DIGIT : 0)
  );
}
for (let c = 0; c < 128; c++) FLAGS[c] = flagsOf(c);

function classAt(text: string, i: number): number {
  if (i >= text.length) return END;
  const c = text.charCodeAt(i);
  return FLAGS[c] || (FLAGS[c] = flagsOf(c));
}

const NO_DECISION = -1;
const NO_MATCH = -2;

/** `'s 't 're 've 'm 'll 'd`, any case, at i: the end of the suffix, or i when there is none. */
function contractionEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // s d m t
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return i + 3; // ll ve re
  return i;
}

/** End of the run of `capital` characters from i, or NO_DECISION at a surrogate. */
function capitalsEnd(text: string, i: number): number {
  let cls = classAt(text, i);
  while (cls & CAPITAL) cls = classAt(text, ++i);
  return cls & SURROGATE ? NO_DECISION : i;
}

/**
 * o200k's first word alternative from i: [capital]* [small]+ 'x?. The capitals run is greedy;
 * when no small character follows it, the regex gives characters back until one it gave back
 * is small (a modifier or mark, in both classes), and the word ends after that one.
 */
function o200kCamelEnd(text: string, i: number): number {
  const capitals = capitalsEnd(text, i);
  if (capitals === NO_DECISION) return NO_DECISION;
  let end = capitals;
  let cls = classAt(text, end);
  if (cls & SMALL) {
    while (cls & SMALL) cls = classAt(text, ++end);
    if (cls & SURROGATE) return NO_DECISION;
    return contractionEnd(text, end);
  }
  while (end > i && !(classAt(text, end - 1) & SMALL)) end--;
  return end > i ? contractionEnd(text, end) : NO_MATCH;
}

/** o200k's second word alternative from i: [capital]+ [small]* 'x?. */
function o200kCapitalsEnd(text: string, i: number): number {
  const capitals = capitalsEnd(text, i);
  if (capitals === NO_DECISION) return NO_DECISION;
  if (capitals === i) return NO_MATCH;
  let end = capitals;
  let cls = classAt(text, end);
  while (cls & SMALL) cls = classAt(text, ++end);
  if (cls & SURROGATE) return NO_DECISION;
  return contractionEnd(text, end);
}

/** The word alternatives, each tried with the optional prefix character and then without, as the regex does. */
function o200kWordEnd(text: string, i: number, first: number): number {
  const prefixed = (first & PREFIX) !== 0;
  const bare = (first & (CAPITAL | SMALL)) !== 0;
  let end = NO_MATCH;
  if (prefixed) end = o200kCamelEnd(text, i + 1);
  if (end === NO_MATCH && bare) end = o200kCamelEnd(text, i);
  if (end === NO_MATCH && prefixed) end = o200kCapitalsEnd(text, i + 1);
  if (end === NO_MATCH && bare) end = o200kCapitalsEnd(text, i);
  return end;
}

/** cl100k's [^\r\n\p{L}\p{N}]?\p{L}+ */
function cl100kWordEnd(text: string, i: number, first: number): number {
  let start: number;
  if (first & LETTER) start = i;
  else if (first & PREFIX) {
    const second = classAt(text, i + 1);
    if (second & SURROGATE) return NO_DECISION;
    if (!(second & LETTER)) return NO_MATCH;
    start = i + 1;
  } else return NO_MATCH;
  let end = start;
  let cls = classAt(text, end);
  while (cls & LETTER) cls = classAt(text, ++end);
  return cls & SURROGATE ? NO_DECISION : end;
}

/** \p{N}{1,3} */
function digitsEnd(text: string, i: number): number {
  let end = i + 1;
  while (end < i + 3) {
    const cls = classAt(text, end);
    if (cls & SURROGATE) return NO_DECISION;
    if (!(cls & DIGIT)) break;
    end++;
  }
  return end;
}

/** ` ?[^\s\p{L}\p{N}]+` then any of \r \n (and / for o200k); NO_MATCH when it does not apply. */
function symbolsEnd(text: string, i: number, slashInTail: boolean): number {
  let end = text.charCodeAt(i) === 0x20 ? i + 1 : i;
  let cls = classAt(text, end);
  if (cls & SURROGATE) return NO_DECISION;
  if (!(cls & SYMBOL)) return NO_MATCH;
  while (cls & SYMBOL) cls = classAt(text, ++end);
  if (cls & SURROGATE) return NO_DECISION;
  for (;;) {
    const c = text.charCodeAt(end);
    if (c === 0x0a || c === 0x0d || (slashInTail && c === 0x2f)) end++;
    else return end;
  }
}

/**
 * The whitespace alternatives from i: o200k `\s*[\r\n]+ | \s+(?!\S) | \s+`, cl100k
 * `\s+$ | \s*[\r\n] | \s+(?!\S) | \s`. Both end after the run's last newline when it has one.
 */
function whitespaceEnd(text: string, i: number, grammar: PieceGrammar): number {
  let runEnd = i;
  let lastNewline = -1;
  let cls = classAt(text, runEnd);
  while (cls & WHITESPACE) {
    if (cls & NEWLINE) lastNewline = runEnd;
    cls = classAt(text, ++runEnd);
  }
  if (cls & SURROGATE) return NO_DECISION;
  if (grammar === 'cl100k' && cls === END) return runEnd;
  if (lastNewline >= 0) return lastNewline + 1;
  if (cls === END) return runEnd;
  return runEnd - i >= 2 ? runEnd - 1 : i + 1;
}

/** The end of the piece that starts at i (< text.length), or NO_DECISION when an astral character decides it. */
export function pieceEnd(text: string, i: number, grammar: PieceGrammar): number {
  const first = classAt(text, i);
  if (first & SURROGATE) return NO_DECISION;
  const o200k = grammar === 'o200k';
  if (!o200k && text.charCodeAt(i) === 0x27) {
    const end = contractionEnd(text, i);
    if (end > i) return end;
  }
  const word = o200k ? o200kWordEnd(text, i, first) : cl100kWordEnd(text, i, first);
  if (word !== NO_MATCH) return word;
  if (first & DIGIT) return digitsEnd(text, i);
  const symbols = symbolsEnd(text, i, o200k);
  if (symbols !== NO_MATCH) return symbols;
  return whitespaceEnd(text, i, grammar);
}

/**
 * The encoding's split regex as tiktoken runs it. gpt-tokenizer's JavaScript copies read `\s`
 * as JavaScript does, so U+FEFF (a format character, which tiktoken treats like any symbol)
 * counted as whitespace and split text where tiktoken does not. Each `\s` and `\S` becomes
 * the Unicode White_Space property, in and out of character classes.
 */
export function referenceSplitRegex(regex: RegExp): RegExp {
  const source = regex.source.replace(/\\\\|\\s|\\S/g, (m) => (m === '\\s' ? '\\p{White_Space}' : m === '\\S' ? '\\P{White_Space}' : m));
  return new RegExp(source, 'gu');
}

/** The plain-ASCII path declines: the piece is decided by `pieceEnd`. */
const NOT_PLAIN = -3;

/**
 * The end of the o200k piece at i when it is plain ASCII of the commonest kinds, as `pieceEnd`
 * would find it; NOT_PLAIN otherwise. Most pieces of real text are a letter run with at most
 * one leading space or symbol, up to three digits, or a run of symbols. No ASCII letter is
 * both capital and small, so both word alternatives end where [A-Z]*[a-z]* does (then its
 * contraction). Where a character past ASCII could carry the piece on (a letter, a mark, a
 * digit or symbol of another script), `pieceEnd` decides, from the class it reads.
 */
function o200kPlainEnd(text: string, i: number): number {
  const length = text.length;
  let c = text.charCodeAt(i);
  if (c >= 0x80) return NOT_PLAIN;
  const first = FLAGS[c];
  let k = i;
  if (first & DIGIT) {
    // \p{N}{1,3}: no word alternative starts at a digit (it is no prefix either).
    const last = Math.min(length, i + 3);
    for (k = i + 1; k < last; k++) {
      c = text.charCodeAt(k);
      if (c >= 0x80) return NOT_PLAIN;
      if (!(FLAGS[c] & DIGIT)) break;
    }
    return k;
  }
  if (!(first & (CAPITAL | SMALL))) {
    if (i + 1 >= length) return NOT_PLAIN;
    c = text.charCodeAt(i + 1);
    if (c >= 0x80) return NOT_PLAIN;
    const second = FLAGS[c];
    if (!(second & (CAPITAL | SMALL))) return plainSymbolsEnd(text, i, second);
    // [^\r\n\p{L}\p{N}] before the letters; \r and \n are white space's.
    if (!(first & PREFIX)) return NOT_PLAIN;
    k = i + 1;
  }
  while (k < length && (c = text.charCodeAt(k)) >= 0x41 && c <= 0x5a) k++;
  while (k < length && (c = text.charCodeAt(k)) >= 0x61 && c <= 0x7a) k++;
  if (k === length) return k;
  c = text.charCodeAt(k);
  if (c >= 0x80) return NOT_PLAIN;
  return c === 0x27 ? contractionEnd(text, k) : k;
}

/**
 * After a character that is no letter or digit, when the next (`second`, ASCII) is no letter:
 * ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, or one space before a digit (`\s+`, which `(?!\S)` refused).
 */
function plainSymbolsEnd(text: string, i: number, second: number): number {
  const length = text.length;
  let k: number;
  if (text.charCodeAt(i) === 0x20) {
    if (second & DIGIT) return i + 1;
    if (!(second & SYMBOL)) return NOT_PLAIN;
    k = i + 2;
  } else if (FLAGS[text.charCodeAt(i)] & SYMBOL) k = i + 1;
  else return NOT_PLAIN;
  let c = 0;
  for (; k < length; k++) {
    c = text.charCodeAt(k);
    if (c >= 0x80) return NOT_PLAIN;
    if (!(FLAGS[c] & SYMBOL)) break;
  }
  while (k < length && ((c = text.charCodeAt(k)) === 0x0a || c === 0x0d || c === 0x2f)) k++;
  return k;
}

/** Splits texts into pieces exactly as `text.matchAll(regex)` does, given the encoding's split regex (see referenceSplitRegex). */
export class PieceSplitter {
  private readonly sticky: RegExp;
  private readonly searching: RegExp;

  constructor(
    readonly grammar: PieceGrammar,
    regex: RegExp,
  ) {
    this.sticky = new RegExp(regex.source, 'uy');
    this.searching = new RegExp(regex.source, 'gu');
  }

  /** Calls `visit(start, end)` for each piece of `text`, in order. */
  split(text: string, visit: (start: number, end: number) => void): void {
    let i = 0;
    const o200k = this.grammar === 'o200k';
    while (i < text.length) {
      let end = o200k ? o200kPlainEnd(text, i) : NOT_PLAIN;
      if (end === NOT_PLAIN) end = pieceEnd(text, i, this.grammar);
      if (end === NO_DECISION) {
        this.sticky.lastIndex = i;
        const match = this.sticky.exec(text);
        if (match !== null) end = i + match[0].length;
        else {
          // matchAll skips what none of the alternatives match (no such text is known).
          this.searching.lastIndex = i;
          const next = this.searching.exec(text);
          if (next === null) return;
          i = next.index;
          end = i + next[0].length;
        }
      }
      visit(i, end);
      i = end;
    }
  }
}
