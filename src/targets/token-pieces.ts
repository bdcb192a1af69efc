/**
 * The pre-tokenizer of the o200k_base and cl100k_base encodings: where the text splits into
 * the pieces that byte-pair encoding then works on, one piece at a time.
 *
 * gpt-tokenizer finds the pieces with the encodings' Unicode regexes, and on English text that
 * regex and the string it allocates per piece cost more than the byte-pair merges themselves.
 * Here ASCII text is split by hand, following the regex alternative by alternative; as soon as
 * a decision would look at a non-ASCII character, the regex itself decides that one piece
 * (sticky, from the same position), so the pieces are the regex's own on any text. The test
 * suite checks that against the regex on random and real text.
 */

export type PieceGrammar = 'o200k' | 'cl100k';

// Character classes of ASCII, as the regexes see them (JS `\s`, `\p{L}`, `\p{N}`).
const LOWER = 1; // \p{Ll}
const UPPER = 2; // \p{Lu}
const DIGIT = 3; // \p{N}
const NEWLINE = 4; // \r \n: whitespace that the prefix class [^\r\n\p{L}\p{N}] excludes
const SPACE = 5; // the rest of \s in ASCII: \t \v \f and space
const OTHER = 6; // [^\s\p{L}\p{N}]
const NON_ASCII = 7; // not decided here
const END = 0;

const ASCII_CLASS = (() => {
  const table = new Uint8Array(128).fill(OTHER);
  for (let c = 0x61; c <= 0x7a; c++) table[c] = LOWER;
  for (let c = 0x41; c <= 0x5a; c++) table[c] = UPPER;
  for (let c = 0x30; c <= 0x39; c++) table[c] = DIGIT;
  table[0x0a] = NEWLINE;
  table[0x0d] = NEWLINE;
  for (const c of [0x09, 0x0b, 0x0c, 0x20]) table[c] = SPACE;
  return table;
})();

function classAt(text: string, i: number): number {
  if (i >= text.length) return END;
  const c = text.charCodeAt(i);
  return c < 128 ? ASCII_CLASS[c]! : NON_ASCII;
}

const isLetter = (cls: number): boolean => cls === LOWER || cls === UPPER;
const isWhitespace = (cls: number): boolean => cls === NEWLINE || cls === SPACE;
/** The optional first character of a word piece: [^\r\n\p{L}\p{N}]. */
const isWordPrefix = (cls: number): boolean => cls === SPACE || cls === OTHER;

const NO_DECISION = -1;

/** `'s 't 're 've 'm 'll 'd`, any case, at i: the end of the suffix, or i when there is none. */
function contractionEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x27) return i;
  const a = text.charCodeAt(i + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return i + 2; // s d m t
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return i + 3; // ll ve re
  return i;
}

/** o200k's two word alternatives from a letter at i: [Lu]*[Ll]+ 'x? or else [Lu]+[Ll]* 'x?. */
function o200kWordEnd(text: string, i: number): number {
  let upperEnd = i;
  let cls = classAt(text, upperEnd);
  while (cls === UPPER) cls = classAt(text, ++upperEnd);
  if (cls === NON_ASCII) return NO_DECISION;
  let lowerEnd = upperEnd;
  while (cls === LOWER) cls = classAt(text, ++lowerEnd);
  if (cls === NON_ASCII) return NO_DECISION;
  // Without lowercase after the capitals the first alternative fails and the second takes the capitals.
  return contractionEnd(text, lowerEnd > upperEnd ? lowerEnd : upperEnd);
}

function cl100kWordEnd(text: string, i: number): number {
  let end = i;
  let cls = classAt(text, end);
  while (isLetter(cls)) cls = classAt(text, ++end);
  return cls === NON_ASCII ? NO_DECISION : end;
}

/** \p{N}{1,3} */
function digitsEnd(text: string, i: number): number {
  let end = i + 1;
  while (end < i + 3) {
    const cls = classAt(text, end);
    if (cls === NON_ASCII) return NO_DECISION;
    if (cls !== DIGIT) break;
    end++;
  }
  return end;
}

/** ` ?[^\s\p{L}\p{N}]+` then any of `tail` (o200k: \r \n /; cl100k: \r \n). */
function symbolsEnd(text: string, i: number, slashInTail: boolean): number {
  let end = text.charCodeAt(i) === 0x20 ? i + 1 : i;
  let cls = classAt(text, end);
  while (cls === OTHER) cls = classAt(text, ++end);
  if (cls === NON_ASCII) return NO_DECISION;
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
  while (isWhitespace(cls)) {
    if (cls === NEWLINE) lastNewline = runEnd;
    cls = classAt(text, ++runEnd);
  }
  if (cls === NON_ASCII) return NO_DECISION;
  if (grammar === 'cl100k' && cls === END) return runEnd;
  if (lastNewline >= 0) return lastNewline + 1;
  if (cls === END) return runEnd;
  return runEnd - i >= 2 ? runEnd - 1 : i + 1;
}

/** The end of the piece that starts at i (< text.length), or NO_DECISION when non-ASCII text decides it. */
export function pieceEnd(text: string, i: number, grammar: PieceGrammar): number {
  const first = classAt(text, i);
  if (first === NON_ASCII) return NO_DECISION;
  const o200k = grammar === 'o200k';
  if (!o200k && text.charCodeAt(i) === 0x27) {
    const end = contractionEnd(text, i);
    if (end > i) return end;
  }
  if (isLetter(first)) return o200k ? o200kWordEnd(text, i) : cl100kWordEnd(text, i);
  if (first === DIGIT) return digitsEnd(text, i);
  const second = classAt(text, i + 1);
  if (isWordPrefix(first)) {
    if (second === NON_ASCII) return NO_DECISION;
    if (isLetter(second)) return o200k ? o200kWordEnd(text, i + 1) : cl100kWordEnd(text, i + 1);
  }
  if (first === OTHER || (text.charCodeAt(i) === 0x20 && second === OTHER)) return symbolsEnd(text, i, o200k);
  return whitespaceEnd(text, i, grammar);
}

/** Splits texts into pieces exactly as `text.matchAll(regex)` does, given the encoding's own split regex. */
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
    while (i < text.length) {
      let end = pieceEnd(text, i, this.grammar);
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
