/**
 * Training/validation split by group. Records that share a first user message
 * (the steps of one agent run, retries of one input, the same input sent by
 * two programs) must land on the same side, or validation would score the
 * model on inputs it trained on. The side is a pure function of (seed, group),
 * so it is reproducible and does not move when records are added; the one
 * exception, an export whose groups all hash to training, is settled by the
 * writer (export/dataset.ts), which moves the group nearest to validation.
 */
import { canonicalValueText, latin1Word, sha256Latin1 } from '../canonical/canonical.js';
import type { Message } from '../record.js';
import { normalizeContent } from '../message-content.js';
import { singleSpaced } from '../white-space.js';

export type Split = 'training' | 'validation';

/**
 * The first user message's content as it is exported (text parts are joined into the
 * string every target writes, so `[{"type":"text","text":"Hi"}]` and `"Hi"` are one group),
 * else its canonical JSON, whatever the program: two programs sent the same first message
 * share a group. User messages without text are passed over; a record without a user message
 * that has some groups by its program alone.
 *
 * Text is compared as a reader would: `What is 2+2?`, `what is 2+2? ` and `What  is 2+2?`
 * are one question, retyped or re-templated, and must not be scored against each other.
 */
export function groupKey(program: string, messages: readonly Message[]): string {
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const text = exportedText(message.content);
    // An empty user message asks nothing (openai leaves it out): the question is in the next one, and
    // grouping by it would part `["", "Q"]` from `["Q"]`, and make the group depend on the target.
    if (text !== '') return `user\u0000${text}`;
  }
  return `program\u0000${program}`;
}

/** Anything past ASCII: plain ASCII is its own NFKC form, and most first messages are plain ASCII. */
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Invisible format characters: a byte order mark, zero-width spaces and joiners, soft hyphens.
 * Pasted or templated text carries them where a reader sees none.
 */
const INVISIBLE = /\p{Cf}/gu;

/** Case, Unicode compatibility forms (full-width letters, ligatures), invisible characters and runs of white space set aside. */
function readerText(text: string): string {
  const folded = (NOT_ASCII.test(text) ? text.normalize('NFKC').replace(INVISIBLE, '') : text).toLowerCase();
  return singleSpaced(folded).trim();
}

function exportedText(content: unknown): string {
  if (typeof content === 'string') return readerText(content);
  if (content === undefined || content === null) return '';
  try {
    const normal = normalizeContent(content, 0);
    if (typeof normal === 'string' && Array.isArray(content)) return readerText(normal);
  } catch {
    // Parts no target writes: the record is dropped at projection, its group does not matter.
  }
  // Written as JSON text (dict content) or parts: its keys in one order, its strings compared as the reader sees them too.
  return readerText(canonicalValueText(content));
}

export function assignSplit(group: string, seed: number | string, validationFraction: number): Split {
  if (!(validationFraction >= 0 && validationFraction <= 1)) {
    throw new RangeError(`validation fraction must be between 0 and 1, got ${validationFraction}`);
  }
  return sideOf(groupFraction(group, seed), validationFraction);
}

/** The side of a group whose fraction (groupFraction) is known. */
export function sideOf(fraction: number, validationFraction: number): Split {
  return validationFraction > 0 && fraction < validationFraction ? 'validation' : 'training';
}

/** sha256 of seed and group, first 8 bytes read as a fraction in [0, 1). */
export function groupFraction(group: string, seed: number | string): number {
  const digest = sha256Latin1(`${seed}\u0000${group}`);
  // 53 bits: the most a double holds exactly, so the result is uniform and never 1. The first
  // 64 bits shifted right by 11, from two words: exact, as each part is below 2^53.
  return (latin1Word(digest, 0) * 2 ** 21 + (latin1Word(digest, 1) >>> 11)) / 2 ** 53;
}
