/**
 * `repetition`: degenerate loops in the assistant's text, by Gopher's repetition rules
 * (Rae et al. 2021, table A1) with datatrove's `GopherRepetitionFilter` defaults and
 * semantics. Applied to the completion's content and, apart, to its reasoning; never to
 * the prompt. Web-quality heuristics (FineWeb, C4) are left out on purpose: they reject the
 * code blocks and bullet lists good chat answers are full of.
 */

/** A duplicate paragraph (split on 2+ new lines) fraction above this is a loop (datatrove `dup_para_frac`). */
export const DUP_PARA_FRAC = 0.3;
/** Characters in duplicate paragraphs over the text's (`dup_para_char_frac`). */
export const DUP_PARA_CHAR_FRAC = 0.2;
/** Duplicate lines (split on new line runs) over lines (`dup_line_frac`). */
export const DUP_LINE_FRAC = 0.3;
/** Characters in duplicate lines over the text's (`dup_line_char_frac`). */
export const DUP_LINE_CHAR_FRAC = 0.2;
/** Most frequent n-gram's characters (n-gram joined by spaces, times its count) over the text's (`top_n_grams`). */
export const TOP_N_GRAMS: readonly (readonly [number, number])[] = [
  [2, 0.2],
  [3, 0.18],
  [4, 0.16],
];
/** Characters of repeated n-grams (joined without spaces, counted without overlap) over the text's (`dup_n_grams`). */
export const DUP_N_GRAMS: readonly (readonly [number, number])[] = [
  [5, 0.15],
  [6, 0.14],
  [7, 0.13],
  [8, 0.12],
  [9, 0.11],
  [10, 0.1],
];
/**
 * Texts of fewer words (punctuation not counted, as Gopher's quality filter counts them) are
 * not judged: Gopher runs these rules after that filter (`min_doc_words` 50), and a short
 * answer's one 2-gram is all of it (`Paris, France` would read as a 2-gram making 60% of it).
 */
export const MIN_WORDS = 50;

/** Words as datatrove's English tokenizer (NLTK) roughly cuts them: letter and digit runs, each other sign alone. */
const WORD = /[\p{L}\p{M}\p{N}_]+(?:['’][\p{L}]+)?|[^\s\p{L}\p{M}\p{N}_]/gu;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Count of elements seen before, and their characters (datatrove `find_duplicates`). */
function duplicates(items: readonly string[]): { count: number; chars: number } {
  const seen = new Set<string>();
  let count = 0;
  let chars = 0;
  for (const item of items) {
    if (seen.has(item)) {
      count++;
      chars += item.length;
    } else seen.add(item);
  }
  return { count, chars };
}

/** Characters of the most frequent n-gram times its count (datatrove `find_top_duplicate`). */
function topNGramChars(words: readonly string[], n: number): number {
  const counts = new Map<string, number>();
  let best = 0;
  for (let i = 0; i + n <= words.length; i++) {
    const gram = words.slice(i, i + n).join(' ');
    const count = (counts.get(gram) ?? 0) + 1;
    counts.set(gram, count);
    best = Math.max(best, gram.length * count);
  }
  return best;
}

/** Characters of n-grams seen before, skipping past each repeat (datatrove `find_all_duplicate`). */
function repeatedNGramChars(words: readonly string[], n: number): number {
  const seen = new Set<string>();
  let chars = 0;
  for (let i = 0; i + n <= words.length; ) {
    const gram = words.slice(i, i + n).join('');
    if (seen.has(gram)) {
      chars += gram.length;
      i += n;
    } else {
      seen.add(gram);
      i++;
    }
  }
  return chars;
}

const ratio = (value: number) => value.toFixed(3);

/** The first Gopher rule the text breaks, with its figure, or null. */
export function repetitionDetail(text: string): string | null {
  const words = text.match(WORD) ?? [];
  let counted = 0;
  for (const word of words) if (HAS_LETTER_OR_DIGIT.test(word) && ++counted >= MIN_WORDS) break;
  if (counted < MIN_WORDS) return null;
  const length = text.length;
  const paragraphs = text.trim().split(/\n{2,}/);
  const para = duplicates(paragraphs);
  if (para.count / paragraphs.length > DUP_PARA_FRAC) return `dup_para_frac ${ratio(para.count / paragraphs.length)} > ${DUP_PARA_FRAC}`;
  if (para.chars / length > DUP_PARA_CHAR_FRAC) return `dup_para_char_frac ${ratio(para.chars / length)} > ${DUP_PARA_CHAR_FRAC}`;
  const lines = text.split(/\n+/);
  const line = duplicates(lines);
  if (line.count / lines.length > DUP_LINE_FRAC) return `dup_line_frac ${ratio(line.count / lines.length)} > ${DUP_LINE_FRAC}`;
  if (line.chars / length > DUP_LINE_CHAR_FRAC) return `dup_line_char_frac ${ratio(line.chars / length)} > ${DUP_LINE_CHAR_FRAC}`;
  for (const [n, limit] of TOP_N_GRAMS) {
    const share = topNGramChars(words, n) / length;
    if (share > limit) return `top_${n}_gram ${ratio(share)} > ${limit}`;
  }
  for (const [n, limit] of DUP_N_GRAMS) {
    const share = repeatedNGramChars(words, n) / length;
    if (share > limit) return `duplicated_${n}_n_grams ${ratio(share)} > ${limit}`;
  }
  return null;
}
