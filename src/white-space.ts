/**
 * White space made one space, as `text.replace(/\s+/g, ' ')` does (JavaScript's `\s`).
 *
 * That regex matches every single space between words and writes it back unchanged: prose
 * is one match per word. Only runs that are not already one plain space need replacing: a
 * run of two or more white space characters, or one that is not U+0020. Matching left to
 * right, a run of two or more is taken whole from its first character (`\s\s+` is greedy),
 * so no match starts inside a run, and the text written is the same.
 */
const UNEVEN_RUN = /\s\s+|[^\S ]/g;

export function singleSpaced(text: string): string {
  return text.replace(UNEVEN_RUN, ' ');
}
